import { liveVenueSuite } from './liveVenue.ts';

// Bitfinex books have no sequence numbers: a lost level change shows as a checksum that no longer matches.
// USD pairs of the test assets (tETHBTC is not USD-quoted), and their USDT perpetuals.
liveVenueSuite({ id: 'bitfinex', markets: 6, gapSymbol: 'tETHUSD', liquidations: false });
liveVenueSuite({ id: 'bitfinex-derivatives', markets: 6, gapSymbol: 'tBTCF0:USTF0', liquidations: true });

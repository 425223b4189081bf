import { liveVenueSuite } from './liveVenue.ts';

// USDT pairs of the test assets; ETH_BTC is not USD-quoted.
liveVenueSuite({ id: 'gate', markets: 6, gapSymbol: 'SOL_USDT', liquidations: false });

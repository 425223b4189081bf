import { liveVenueSuite } from './liveVenue.ts';

// USD products of the test assets; ETH-BTC is not USD-quoted. A skipped sequence number is a lost
// message of the connection: every book it carries is resynced.
liveVenueSuite({ id: 'coinbase', markets: 6, gapSymbol: 'BTC-USD', liquidations: false });

import { liveVenueSuite } from './liveVenue.ts';

// The inverse perpetuals of the test assets (XBTUSD...); XBTUSDT is linear and not collected. Sizes
// are USD contracts: the suite recomputes base units as contracts x 1 USD / price. BitMEX has no
// sequence numbers: the simulator's skipped book message is one that inserted a row, which the
// collector notices when a later message updates or deletes that row.
liveVenueSuite({ id: 'bitmex', markets: 6, gapSymbol: 'SOLUSD', liquidations: true, liquidationsUntimed: true });

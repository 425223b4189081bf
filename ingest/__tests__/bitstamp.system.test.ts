import { liveVenueSuite } from './liveVenue.ts';

// USD pairs of the test assets; ethbtc is not USD-quoted. Every book message is the whole top 100:
// a skipped one is healed by the next, with no resync to count.
liveVenueSuite({ id: 'bitstamp', markets: 6, gapSymbol: 'ethusd', liquidations: false, wholeBooks: true });

import { liveVenueSuite } from './liveVenue.ts';

// Kraken's books have no sequence numbers: a skipped update shows as a checksum that no longer matches.
liveVenueSuite({ id: 'kraken', markets: 6, gapSymbol: 'ETH/USD', liquidations: false, checksumOnly: true });

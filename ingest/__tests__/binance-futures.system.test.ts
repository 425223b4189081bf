import { liveVenueSuite } from './liveVenue.ts';

// The test assets' USDT perpetuals; 1000PEPEUSDT is not PEPE (see venue-assets.json) and is not collected.
liveVenueSuite({ id: 'binance-futures', markets: 5, gapSymbol: 'ETHUSDT', liquidations: true });

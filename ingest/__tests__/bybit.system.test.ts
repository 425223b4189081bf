import { liveVenueSuite } from './liveVenue.ts';

liveVenueSuite({ id: 'bybit', markets: 6, gapSymbol: 'SOLUSDT', liquidations: false });
liveVenueSuite({ id: 'bybit-linear', markets: 6, gapSymbol: 'BTCUSDT', liquidations: true });

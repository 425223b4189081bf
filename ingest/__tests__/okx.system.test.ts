import { liveVenueSuite } from './liveVenue.ts';

liveVenueSuite({ id: 'okx', markets: 6, gapSymbol: 'BTC-USDT', liquidations: false });
// Sizes in contracts of ctVal base units (PEPE: 10,000,000 per contract in the simulator).
liveVenueSuite({ id: 'okx-swap', markets: 6, gapSymbol: 'ETH-USDT-SWAP', liquidations: true });

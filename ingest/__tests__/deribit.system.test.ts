import { liveVenueSuite } from './liveVenue.ts';

// The USDC linear perpetuals of the test assets and the inverse BTC-PERPETUAL and ETH-PERPETUAL
// (USD amounts, converted per trade and level by price); liquidations arrive as flagged trades.
liveVenueSuite({ id: 'deribit', markets: 8, gapSymbol: 'XRP_USDC-PERPETUAL', liquidations: true });

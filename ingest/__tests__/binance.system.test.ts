import { liveVenueSuite } from './liveVenue.ts';

// Every USDT market of the test assets; ETHBTC is not USD-quoted.
liveVenueSuite({ id: 'binance', markets: 6, gapSymbol: 'BTCUSDT', liquidations: false });

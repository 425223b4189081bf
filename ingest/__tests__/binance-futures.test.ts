import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLiquidationEvent } from '../collector.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { parseExchangeInfo } from '../venues/binance.ts';
import { binanceFutures } from '../venues/binance-futures.ts';
import { fixture, frames } from './fixtures.ts';

const parseAll = (name: string) => frames('binance-futures', name).flatMap(binanceFutures.parse);
const btc: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };

describe('binance-futures messages', () => {
  test('aggregate trades: one id per taker order and price, taker side from the maker flag', () => {
    expect(parseAll('ws_trade.json')).toEqual([
      { kind: 'trade', symbol: 'BTCUSDT', tradeId: '2290311001', price: '87010.10', quantity: '0.150', side: 'sell', ts: 1767225600128 },
      { kind: 'trade', symbol: 'ETHUSDT', tradeId: '1888112', price: '2950.55', quantity: '3.412', side: 'buy', ts: 1767225600459 },
    ]);
  });

  test('liquidations: a forced SELL closed a long, filled quantity at the average price; unfilled orders are no liquidation', () => {
    const [long, short, expired] = parseAll('ws_liquidation.json');
    expect(long).toEqual({
      kind: 'liquidation', symbol: 'BTCUSDT', liquidationId: '1767225600998-SELL-0.350@86912.40', price: '86912.40', quantity: '0.350', positionSide: 'long', ts: 1767225600998,
    });
    expect(short).toMatchObject({ kind: 'liquidation', symbol: 'SOLUSDT', positionSide: 'short', price: '187.95', quantity: '120' });
    expect(expired).toEqual({ kind: 'control', what: 'status', detail: 'forceOrder EXPIRED' });
    expect(toLiquidationEvent('binance-futures', btc, long as Extract<VenueMessage, { kind: 'liquidation' }>, 1767225601010)).toEqual({
      type: 'liquidation', venue: 'binance-futures', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', liquidationId: '1767225600998-SELL-0.350@86912.40',
      price: 86912.4, quantity: 0.35, positionSide: 'long', ts: 1767225600998, receivedAt: 1767225601010,
    });
    expect(binanceFutures.liquidations).toMatchObject({ sampled: true });
  });

  test('unknown streams, malformed trades and garbage are unknown, never thrown', () => {
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('markets: USDT and USDC perpetuals of catalog assets; 1000PEPE is not PEPE and is listed as unmapped', () => {
    const { markets, unmapped } = selectMarkets(binanceFutures, parseExchangeInfo(fixture('binance-futures', 'rest_exchange_info.json'), 'PERPETUAL'));
    expect(markets.map((m) => [m.symbol, m.asset, m.quote])).toEqual([
      ['BTCUSDT', 'bitcoin', 'USDT'],
      ['ETHUSDC', 'ethereum', 'USDC'],
    ]);
    expect(unmapped).toEqual(['1000PEPEUSDT']);
  });

  test('depth on the /public route, trades and the all-market liquidation stream on /market', () => {
    const plans = binanceFutures.sockets({ ws: 'wss://f', rest: 'https://f' }, [btc]);
    expect(plans.map((p) => [p.url, p.subscribe.map((s) => JSON.parse(s).params)])).toEqual([
      ['wss://f/public/stream', [['btcusdt@depth@100ms']]],
      ['wss://f/market/stream', [['btcusdt@aggTrade', '!forceOrder@arr']]],
    ]);
  });
});

describe('binance-futures book sync', () => {
  const updates = parseAll('ws_book_update.json') as BookMessage[];
  const snapshot = binanceFutures.book.restSnapshot!.parse(fixture('binance-futures', 'rest_book_snapshot.json'));

  test('the first diff straddles the snapshot, the next continues it by pu; a broken pu chain is a counted resync', () => {
    const sync = new BookSync(binanceFutures.book, btc);
    expect(sync.onMessage(updates[0]!)).toBe('buffered');
    expect(sync.onRestSnapshot(snapshot)).toBe('synced');
    expect(sync.onMessage(updates[1]!)).toBe('applied');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 1.5]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.3, 1.25], [87000.5, 5]]);
    expect(sync.onMessage(updates[2]!)).toBe('gap');
    expect(sync.resyncs).toBe(1);
    expect(sync.synced).toBe(false);
    expect(sync.wantsRestSnapshot).toBe(true);
  });
});

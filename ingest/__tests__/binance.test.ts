import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import {
  BinanceBookSync,
  parseExchangeInfo,
  parseMessage,
  subscribeMessages,
  toSnapshot,
  toTradeEvent,
  type DepthDiff,
} from '../venues/binance.ts';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../venues/binance/__fixtures__/${name}`, import.meta.url), 'utf8'));
const frames = (name: string) => (fixture(name) as unknown[]).map((f) => (typeof f === 'string' ? f : JSON.stringify(f)));

describe('binance messages', () => {
  test('trades: taker side from the maker flag, ids as strings, exact numbers', () => {
    const [btc, eth] = frames('ws_trade.json').map(parseMessage);
    expect(btc).toEqual({ kind: 'trade', symbol: 'BTCUSDT', tradeId: '4812345601', price: 87012.45, quantity: 0.0152, side: 'sell', ts: 1767225600121 });
    expect(eth).toMatchObject({ kind: 'trade', side: 'buy', price: 2951.1, quantity: 1.25 });
    const market = { symbol: 'BTCUSDT', baseAsset: 'BTC', quoteAsset: 'USDT', asset: 'bitcoin' };
    expect(toTradeEvent(btc as Extract<typeof btc, { kind: 'trade' }>, market, 1767225600200)).toEqual({
      type: 'trade', venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', tradeId: '4812345601',
      price: 87012.45, quantity: 0.0152, side: 'sell', ts: 1767225600121, receivedAt: 1767225600200,
    });
  });

  test('depth diffs, acks and unknown frames', () => {
    const [first] = frames('ws_depth_diff.json').map(parseMessage);
    expect(first).toEqual({
      kind: 'depth',
      diff: { symbol: 'BTCUSDT', firstUpdateId: 157, finalUpdateId: 160, eventTime: 1767225600100, bids: [[87000, 1.5], [86999, 0]], asks: [[87001, 2]] },
    });
    expect(frames('ws_subscribe_ack.json').map(parseMessage)).toEqual([{ kind: 'ack' }, { kind: 'ack' }]);
    expect(frames('ws_unknown.json').map(parseMessage)).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('markets: trading, USD-quoted, in the catalog; the rest listed as unmapped', () => {
    const { markets, unmapped } = parseExchangeInfo(fixture('rest_exchange_info.json'));
    expect(markets).toEqual([
      { symbol: 'BTCUSDT', baseAsset: 'BTC', quoteAsset: 'USDT', asset: 'bitcoin' },
      { symbol: 'SOLUSDC', baseAsset: 'SOL', quoteAsset: 'USDC', asset: 'solana' },
    ]);
    expect(unmapped).toEqual(['WIF']);
  });

  test('subscriptions are cut into batches of at most 200 streams', () => {
    const markets = Array.from({ length: 150 }, (_, i) => ({ symbol: `A${i}USDT`, baseAsset: `A${i}`, quoteAsset: 'USDT', asset: `a${i}` }));
    const messages = subscribeMessages(markets).map((m) => JSON.parse(m));
    expect(messages.map((m) => m.params.length)).toEqual([200, 100]);
    expect(messages[0]).toMatchObject({ method: 'SUBSCRIBE', id: 1 });
    expect(messages[0].params.slice(0, 2)).toEqual(['a0usdt@trade', 'a0usdt@depth@100ms']);
  });
});

describe('binance book sync', () => {
  const diffs = frames('ws_depth_diff.json').map((f) => (parseMessage(f) as { diff: DepthDiff }).diff);
  const snapshot = toSnapshot(fixture('rest_depth_snapshot.json'));

  test('snapshot + buffered diffs: stale ones dropped, the rest applied in order', () => {
    const sync = new BinanceBookSync();
    expect(sync.onDiff(diffs[0]!)).toBe('buffered');
    expect(sync.onDiff(diffs[1]!)).toBe('buffered');
    expect(sync.wantsSnapshot).toBe(true);
    // lastUpdateId 158 lies inside the first diff (157..160): it applies, then 161..163.
    expect(sync.onSnapshot(snapshot)).toBe('synced');
    expect(sync.book.top('bid', 10)).toEqual([[87000, 1.5], [86998, 3], [86997, 2]]);
    expect(sync.book.top('ask', 10)).toEqual([[87002, 0.75], [87003, 5]]);
    // A diff already contained in the book is ignored.
    expect(sync.onDiff(diffs[1]!)).toBe('stale');
  });

  test('a snapshot older than the first buffered diff is refetched', () => {
    const sync = new BinanceBookSync();
    sync.onDiff(diffs[1]!);
    expect(sync.onSnapshot(snapshot)).toBe('refetch');
    expect(sync.synced).toBe(false);
  });

  test('a gap in the update ids discards the book and forces a counted resync', () => {
    const sync = new BinanceBookSync();
    sync.onDiff(diffs[0]!);
    sync.onSnapshot(snapshot);
    expect(sync.onDiff(diffs[1]!)).toBe('applied');
    // 164..165 never arrived.
    expect(sync.onDiff(diffs[2]!)).toBe('gap');
    expect(sync.resyncs).toBe(1);
    expect(sync.synced).toBe(false);
    expect(sync.book.top('bid', 5)).toEqual([]);
    expect(sync.wantsSnapshot).toBe(true);
    // A fresh snapshot at 167 brings it back, applying the buffered 166..168.
    expect(sync.onSnapshot({ lastUpdateId: 167, bids: [[87000, 9]], asks: [[87005, 1]] })).toBe('synced');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 0.1]]);
  });
});

import { describe, expect, it } from 'vitest';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import { referenceTicks } from '../../aggregate/__tests__/indexReference.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, trade, type TradeRow } from '../../test/support/harness.ts';

const T = Date.now();
const nowSecond = Math.floor(T / 1000);
const day = 86_400;

// Prices are multiples of 1/4 and quantities of 1/8: every product and sum is exact in binary,
// so the weights the test computes equal the engine's whatever the summation order.
const trades: TradeRow[] = [
  // bitcoin, the latest second: three index markets, and a EUR market that the index leaves out (no EUR rate here).
  trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: 'b1', ts: (nowSecond - 3) * 1000 + 100, price: 100_000.25, quantity: 0.5 }),
  trade({ venue: 'binance', market: 'BTCUSDC', asset: 'bitcoin', quote: 'USDC', trade_id: 'c1', ts: (nowSecond - 3) * 1000 + 400, price: 100_010.5, quantity: 0.25 }),
  trade({ venue: 'coinbase', market: 'BTC-USD', asset: 'bitcoin', quote: 'USD', trade_id: 'u1', ts: (nowSecond - 3) * 1000 + 900, price: 99_990.75, quantity: 1.125 }),
  trade({ venue: 'kraken', market: 'XBTEUR', asset: 'bitcoin', quote: 'EUR', trade_id: 'e1', ts: (nowSecond - 3) * 1000 + 950, price: 90_000, quantity: 3 }),
  // bitcoin, earlier seconds.
  trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: 'b0', ts: (nowSecond - 13) * 1000 + 5, price: 99_500, quantity: 2 }),
  // around now - 24 h: the reference is the latest second at or before it.
  trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: 'r0', ts: (nowSecond - day - 3000) * 1000, price: 80_000, quantity: 1 }),
  trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: 'r1', ts: (nowSecond - day - 40) * 1000 + 200, price: 95_000.5, quantity: 0.375 }),
  trade({ venue: 'coinbase', market: 'BTC-USD', asset: 'bitcoin', quote: 'USD', trade_id: 'r2', ts: (nowSecond - day - 40) * 1000 + 700, price: 95_100.25, quantity: 0.625 }),
  trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: 'r3', ts: (nowSecond - day + 40) * 1000, price: 97_000, quantity: 1 }),
  // ethereum: history shorter than 24 h, and the last print 10 minutes old (not measured).
  trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: 'x1', ts: (nowSecond - 7200) * 1000 + 10, price: 3_000.5, quantity: 4 }),
  trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: 'x2', ts: (nowSecond - 7200) * 1000 + 20, price: 3_001, quantity: 2 }),
  trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: 'x3', ts: (nowSecond - 600) * 1000, price: 3_100.25, quantity: 1.5 }),
  // solana: last traded 3 days ago, outside the 48 h the endpoint reads: left out.
  trade({ venue: 'binance', market: 'SOLUSDT', asset: 'solana', quote: 'USDT', trade_id: 's1', ts: (nowSecond - 3 * day) * 1000, price: 150, quantity: 10 }),
  // dogecoin: only a EUR market, so no index price: left out.
  trade({ venue: 'kraken', market: 'DOGEEUR', asset: 'dogecoin', quote: 'EUR', trade_id: 'd1', ts: (nowSecond - 2) * 1000, price: 0.125, quantity: 1000 }),
  // cardano: two venues in step until coinbase jumps 12.5 % 10 s ago; each is then an outlier to
  // the median of the two, so the index fails closed: the last price is carried, and is not
  // measured although its last trade is recent.
  ...Array.from({ length: 38 }, (_, i) => nowSecond - 40 + i).flatMap((s) => [
    trade({ venue: 'kraken', market: 'ADAUSD', asset: 'cardano', quote: 'USD', trade_id: `k${s}`, ts: s * 1000 + 100, price: 0.5, quantity: 100 }),
    trade({ venue: 'coinbase', market: 'ADA-USD', asset: 'cardano', quote: 'USD', trade_id: `c${s}`, ts: s * 1000 + 200, price: s < nowSecond - 10 ? 0.5 : 0.5625, quantity: 100 }),
  ]),
];

/** When the index is computed (as the runner would have by then), and the last second that covers. */
const computedAt = T + 2_500;
const lastSecond = Math.floor((computedAt - defaultIndexSchedule.lagMs) / 1000) - 1;

/**
 * Independent recomputation from the trades (aggregate/__tests__/indexReference.ts): the index of
 * the last computed second, and the index at the latest second at or before now - 24 h (or the
 * first second in the 48 h the endpoint reads, when there is none before).
 */
function expectedEntry(asset: string, symbol: string, at: number, staleAfterMs: number) {
  const ticks = referenceTicks(trades, asset, nowSecond - 4 * day, lastSecond, { params: defaultIndexParams });
  const latest = ticks.at(-1)!;
  expect(latest.second).toBe(lastSecond);
  const inWindow = ticks.filter((t) => t.second >= Math.floor(at / 1000) - 2 * day);
  const refSecond = Math.floor(at / 1000) - day;
  const reference = inWindow.findLast((t) => t.second <= refSecond) ?? inWindow[0]!;
  return {
    assetId: asset,
    symbol,
    price: latest.price,
    change24h: (latest.price / reference.price - 1) * 100,
    measured: latest.status !== 'fail_closed' && at - latest.lastTradeAt <= staleAfterMs,
    updatedAt: latest.lastTradeAt,
  };
}

interface PricesBody {
  prices: ReturnType<typeof expectedEntry>[];
  at: number;
}

describe('GET /v1/prices', () => {
  const api = useTestApi({
    keyName: 'prices-test',
    seed: async (store) => {
      // Three blocks, so the per-second sums arrive as separate parts to merge.
      await store.insert('trades', trades.slice(0, 2));
      await store.insert('trades', trades.slice(2, 7));
      await store.insert('trades', trades.slice(7));
      await computeIndex(store, computedAt);
    },
  });

  it('lists the catalog assets that have an index price, in rank order, with values recomputed from the trades', async () => {
    const res = await api.get('/v1/prices');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = res.json as PricesBody;
    expect(Number.isInteger(body.at)).toBe(true);
    expect(Math.abs(body.at - Date.now())).toBeLessThan(60_000);
    const stale = api.config.INDEX_STALE_AFTER_MS;
    expect(body.prices).toEqual([
      expectedEntry('bitcoin', 'btc', body.at, stale),
      expectedEntry('ethereum', 'eth', body.at, stale),
      expectedEntry('cardano', 'ada', body.at, stale),
    ]);
    // Sanity of the fixture itself: one measured asset, one stale, one with history under 24 h, one carried.
    expect(body.prices.map((p) => p.measured)).toEqual([true, false, false]);
    const [btc, , ada] = body.prices;
    expect(ada).toMatchObject({ price: 0.5, updatedAt: (nowSecond - 11) * 1000 + 200 });
    expect(body.at - ada!.updatedAt).toBeLessThan(stale);
    expect(btc!.updatedAt).toBe((nowSecond - 3) * 1000 + 900);
    // Three USD-valued markets on two venues, each within 0.02 % of the others: all in the index.
    expect(btc!.price).toBeGreaterThan(99_990.75);
    expect(btc!.price).toBeLessThan(100_010.5);
  });

  it('returns the listed ids only, in rank order, leaving out unknown ids and assets without a price', async () => {
    const res = await api.get('/v1/prices?ids=ethereum,no-such-coin,bitcoin,solana,dogecoin,ethereum');
    expect(res.status).toBe(200);
    expect((res.json as PricesBody).prices.map((p) => p.assetId)).toEqual(['bitcoin', 'ethereum']);

    const none = await api.get('/v1/prices?ids=solana,no-such-coin');
    expect(none.status).toBe(200);
    expect((none.json as PricesBody).prices).toEqual([]);
  });

  it.each([
    ['BTC', 'lowercase slug'],
    ['bitcoin,', 'lowercase slug'],
    ['', 'at least one'],
    ['bit coin', 'lowercase slug'],
    [Array.from({ length: 251 }, (_, i) => `coin-${i}`).join(','), 'at most 250'],
  ])('answers 400 bad_request naming ids for ids=%j', async (ids, hint) => {
    const res = await api.get(`/v1/prices?ids=${encodeURIComponent(ids)}`);
    expect(res.status).toBe(400);
    const body = res.json as { error: { code: string; message: string; status: number } };
    expect(body.error.code).toBe('bad_request');
    expect(body.error.status).toBe(400);
    expect(body.error.message).toContain('ids');
    expect(body.error.message).toContain(hint);
  });

  it('accepts 250 ids and refuses ids given twice as separate parameters', async () => {
    const many = ['bitcoin', ...Array.from({ length: 249 }, (_, i) => `coin-${i}`)].join(',');
    const ok = await api.get(`/v1/prices?ids=${many}`);
    expect(ok.status).toBe(200);
    expect((ok.json as PricesBody).prices.map((p) => p.assetId)).toEqual(['bitcoin']);

    const twice = await api.get('/v1/prices?ids=bitcoin&ids=ethereum');
    expect(twice.status).toBe(400);
    expect((twice.json as { error: { message: string } }).error.message).toContain('ids');
  });

  it('sends an ETag and Cache-Control, and answers a conditional GET with 304', async () => {
    // The body carries `at`, so a rebuild between the two requests changes the ETag: then try again.
    let conditional;
    let etag: string | null = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      const first = await api.get('/v1/prices?ids=bitcoin');
      expect(first.status).toBe(200);
      expect(first.headers.get('cache-control')).toBe('private, max-age=5');
      etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      // fetch adds `Cache-Control: no-cache` to a conditional request unless one is given, and no-cache means "revalidate, no 304".
      conditional = await api.get('/v1/prices?ids=bitcoin', { 'if-none-match': etag!, 'cache-control': 'max-age=0' });
      if (conditional.status !== 200) break;
    }
    expect(conditional!.status).toBe(304);
    expect(conditional!.text).toBe('');
    expect(conditional!.headers.get('etag')).toBe(etag);
    expect(conditional!.headers.get('x-request-id')).toBeTruthy();
    expect(conditional!.headers.get('x-ratelimit-remaining')).toBeTruthy();

    const other = await api.get('/v1/prices?ids=bitcoin', { 'if-none-match': '"something-else"', 'cache-control': 'max-age=0' });
    expect(other.status).toBe(200);
    expect(other.text.length).toBeGreaterThan(0);
  });

  it('refuses a parameter the endpoint does not take, naming it, rather than answering as if it were absent', async () => {
    // `ids[]` used to be ignored: every asset came back. Express parses the query plainly, so the bracket stays in the name.
    for (const [query, named] of [['ids[]=bitcoin', 'ids[]'], ['ids=bitcoin&id=ethereum', 'id'], ['vs=usd&foo=1', 'vs, foo']] as const) {
      const res = await api.get(`/v1/prices?${query}`);
      expect(res.status, query).toBe(400);
      expect((res.json as any).error, query).toMatchObject({ code: 'bad_request', status: 400 });
      expect((res.json as any).error.message, query).toBe(`unknown parameter ${named}: this endpoint takes ids`);
    }
    const none = await api.get('/v1/global?page=2');
    expect(none.status).toBe(400);
    expect((none.json as any).error.message).toBe('unknown parameter page: this endpoint takes none');
  });
});

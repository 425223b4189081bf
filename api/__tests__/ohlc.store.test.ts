import { describe, expect, it, vi } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { indexQuotes, trade, type TradeRow } from '../../test/support/harness.ts';

const minute = 60_000;
const hour = 60 * minute;
const dayMs = 24 * hour;

/** Bucket start (unix ms, UTC) of a trade time, written out here rather than taken from the store. */
const bucketStart: Record<string, (ts: number) => number> = {
  '1m': (ts) => ts - (ts % minute),
  '5m': (ts) => ts - (ts % (5 * minute)),
  '15m': (ts) => ts - (ts % (15 * minute)),
  '1h': (ts) => ts - (ts % hour),
  '4h': (ts) => ts - (ts % (4 * hour)),
  '1d': (ts) => ts - (ts % dayMs),
  // 1970-01-01 was a Thursday: Mondays fall 4 days after each multiple of 7 days.
  '1w': (ts) => Math.floor((ts - 4 * dayMs) / (7 * dayMs)) * 7 * dayMs + 4 * dayMs,
};
const limits: Record<string, number> = { '1m': 1440, '5m': 864, '15m': 672, '1h': 720, '4h': 540, '1d': 365, '1w': 260 };
const stepMs: Record<string, number> = { '1m': minute, '5m': 5 * minute, '15m': 15 * minute, '1h': hour, '4h': 4 * hour, '1d': dayMs, '1w': 7 * dayMs };

// The clock stands still in this file (for the API too): the gapless series runs up to the interval that holds now.
const now = Date.now();
vi.useFakeTimers({ toFake: ['Date'], now });

/** A small deterministic generator, so a failure replays the same trades. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

const markets = [
  { venue: 'binance', market: 'BTCUSDT', quote: 'USDT' },
  { venue: 'binance', market: 'BTCUSDC', quote: 'USDC' },
  { venue: 'coinbase', market: 'BTC-USD', quote: 'USD' },
  // Not in the index: its far-off prices would show in any candle that included it.
  { venue: 'kraken', market: 'XBTEUR', quote: 'EUR' },
];

/**
 * 36 days of bitcoin trades on four markets, one every ~7 minutes, plus bursts where several
 * markets trade in the same millisecond (open/close then hinge on the trade id). Prices are
 * multiples of 1/4 and quantities of 1/8, so sums are exact in any order.
 */
function makeTrades(end: number): TradeRow[] {
  const rnd = random(42);
  const rows: TradeRow[] = [];
  const start = end - 36 * dayMs;
  let price = 60_000;
  let n = 0;
  for (let ts = start; ts < end; ts += 5 * minute + Math.floor(rnd() * 4 * minute)) {
    price += Math.round((rnd() - 0.5) * 400) / 4;
    const burst = rnd() < 0.1 ? 3 : 1;
    for (let b = 0; b < burst; b++) {
      const m = markets[Math.floor(rnd() * markets.length)]!;
      const p = m.quote === 'EUR' ? price * 2 : price + Math.round((rnd() - 0.5) * 40) / 4;
      rows.push(trade({ ...m, asset: 'bitcoin', trade_id: `${m.market}-${String(n++).padStart(6, '0')}`, ts, price: p, quantity: (1 + Math.floor(rnd() * 40)) / 8 }));
    }
  }
  return rows;
}

interface Candle {
  timestamp: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** Independent recomputation of the index candles: first/last trade by (ts, trade_id), max, min, sum. */
function expectedCandles(trades: TradeRow[], interval: string): Candle[] {
  const included = trades
    .filter((t) => indexQuotes.has(t.quote))
    .sort((a, b) => a.ts - b.ts || (a.trade_id < b.trade_id ? -1 : a.trade_id > b.trade_id ? 1 : 0));
  const buckets = new Map<number, Candle>();
  for (const t of included) {
    const timestamp = bucketStart[interval]!(t.ts);
    const c = buckets.get(timestamp);
    if (!c) {
      buckets.set(timestamp, { timestamp, open: t.price, high: t.price, low: t.price, close: t.price, volume: t.quantity });
      continue;
    }
    c.high = Math.max(c.high, t.price);
    c.low = Math.min(c.low, t.price);
    c.close = t.price;
    c.volume += t.quantity;
  }
  // Gapless: every interval from the first traded one to the one that holds now; one without trades repeats the previous close.
  const series: Candle[] = [];
  const first = Math.min(...buckets.keys());
  for (let t = first; t <= bucketStart[interval]!(now); t += stepMs[interval]!) {
    const close = series.at(-1)?.close;
    series.push(buckets.get(t) ?? { timestamp: t, open: close!, high: close!, low: close!, close: close!, volume: 0 });
  }
  return series.slice(-limits[interval]!);
}

describe('GET /v1/coins/{id}/ohlc', () => {
  const trades = makeTrades(now);
  const api = useTestApi({
    keyName: 'ohlc-test',
    seed: async (store) => {
      // Interleaved blocks in reverse time order, so most buckets are assembled from several inserts and merged at query time.
      for (let part = 0; part < 3; part++) {
        await store.insert('trades', trades.filter((_, i) => i % 3 === part).reverse());
      }
    },
  });

  it('has a fixture that exercises the bucket limits and the exclusion of non-USD markets', () => {
    expect(trades.length).toBeGreaterThan(7000);
    expect(trades.some((t) => t.quote === 'EUR')).toBe(true);
    // More buckets than one response holds for 1m, 5m, 15m and 1h.
    for (const interval of ['1m', '5m', '15m', '1h']) {
      expect(new Set(trades.map((t) => bucketStart[interval]!(t.ts))).size).toBeGreaterThan(limits[interval]!);
    }
  });

  it.each(Object.keys(limits))('serves %s candles recomputed from the trades', async (interval) => {
    const res = await api.get(`/v1/coins/bitcoin/ohlc?interval=${interval}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ candles: expectedCandles(trades, interval), source: 'mds:trades', rate: 1, currency: 'usd', coverage: 'full', gaps: [] });
  });

  it('defaults to 1h and usd', async () => {
    const res = await api.get('/v1/coins/bitcoin/ohlc');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ candles: expectedCandles(trades, '1h'), source: 'mds:trades', rate: 1, currency: 'usd', coverage: 'full', gaps: [] });
    const explicit = await api.get('/v1/coins/bitcoin/ohlc?interval=1h&vs=usd');
    expect(explicit.text).toBe(res.text);
  });

  it('answers an asset of the catalog without trades with no candles', async () => {
    const res = await api.get('/v1/coins/solana/ohlc?interval=1d');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ candles: [], source: 'mds:trades', rate: 1, currency: 'usd', coverage: 'full', gaps: [] });
  });

  it.each(['EUR', 'USD', 'xau', 'xyz', ''])('refuses vs=%j with 400 naming vs and the allowed values', async (vs) => {
    const res = await api.get(`/v1/coins/bitcoin/ohlc?vs=${vs}`);
    expect(res.status).toBe(400);
    const { error } = res.json as { error: { code: string; message: string; status: number } };
    expect(error).toMatchObject({ code: 'bad_request', status: 400 });
    expect(error.message).toContain('vs');
    expect(error.message).toContain('usd');
  });

  it.each(['2h', '1M', '60', ''])('refuses interval=%j with 400 naming interval and the allowed values', async (interval) => {
    const res = await api.get(`/v1/coins/bitcoin/ohlc?interval=${interval}`);
    expect(res.status).toBe(400);
    const { error } = res.json as { error: { code: string; message: string; status: number } };
    expect(error).toMatchObject({ code: 'bad_request', status: 400 });
    expect(error.message).toContain('interval');
    expect(error.message).toContain('1m, 5m, 15m, 1h, 4h, 1d, 1w');
  });

  it('answers an unknown asset with 404 not_found', async () => {
    const res = await api.get('/v1/coins/no-such-coin/ohlc');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: { code: 'not_found', message: expect.stringContaining('no-such-coin'), status: 404 } });
  });

  it('sends a content ETag and answers a matching conditional GET with 304', async () => {
    const first = await api.get('/v1/coins/bitcoin/ohlc?interval=1d');
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('private, max-age=60');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    // fetch adds `Cache-Control: no-cache` to a conditional request unless one is given.
    const conditional = await api.get('/v1/coins/bitcoin/ohlc?interval=1d', { 'if-none-match': etag, 'cache-control': 'max-age=0' });
    expect(conditional.status).toBe(304);
    expect(conditional.text).toBe('');
    const otherInterval = await api.get('/v1/coins/bitcoin/ohlc?interval=1w', { 'if-none-match': etag, 'cache-control': 'max-age=0' });
    expect(otherInterval.status).toBe(200);
  });
});

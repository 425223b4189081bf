import { describe, expect, it, vi } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { indexQuotes, trade, type TradeRow } from '../../test/support/harness.ts';

// GET /v1/coins/{id}/ohlc and /chart with from/to: candles, points and their per-bucket FX rates
// recomputed here from the trades and reference rates the test inserts.

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;
/** The day on which the EUR reference rate changes. */
const D = Date.UTC(2026, 9, 14);
const now = D + 30 * hour + 17 * minute;
vi.useFakeTimers({ toFake: ['Date'], now });

const eurBefore = 0.9;
const eurFrom = 0.8;
const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
const referenceRows = [
  { date: iso(D - 3 * day), currency: 'eur', per_usd: eurBefore, source: 'test-ref', imported_at: now },
  { date: iso(D), currency: 'eur', per_usd: eurFrom, source: 'test-ref', imported_at: now },
];

let seq = 0;
const at = (venue: string, market: string, quote: string, ts: number, price: number, quantity: number): TradeRow =>
  trade({ venue, market, asset: 'bitcoin', quote, trade_id: String(seq++).padStart(5, '0'), ts, price, quantity });

const trades: TradeRow[] = [];
// Every 50 minutes from D - 40 h to now on coinbase and binance, but none in [D - 10 h, D - 6 h): the range starts in that gap.
for (let ts = D - 40 * hour + 7_000; ts < now; ts += 50 * minute) {
  if (ts >= D - 10 * hour && ts < D - 6 * hour) continue;
  const price = 60_000 + ((ts / minute) % 97) * 4.25;
  trades.push(at('coinbase', 'BTC-USD', 'USD', ts, price, 0.5 + (seq % 5) / 8));
  trades.push(at('binance', 'BTCUSDT', 'USDT', ts + 1_000, price + 2.5, 0.25));
}
/** The bucket whose EUR rate is measured: kraken trades bitcoin against EUR and USD in it. */
const measuredAt = D + 3 * hour + 10 * minute;
trades.push(
  at('kraken', 'XBTUSD', 'USD', measuredAt, 61_000, 0.5),
  at('kraken', 'XBTUSD', 'USD', measuredAt + 30_000, 61_010, 0.25),
  at('kraken', 'XBTEUR', 'EUR', measuredAt + 60_000, 50_000, 0.125),
  at('kraken', 'XBTEUR', 'EUR', measuredAt + 90_000, 50_100, 0.375),
);

interface Candle {
  timestamp: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

const indexTrades = trades.filter((t) => indexQuotes.has(t.quote)).sort((a, b) => a.ts - b.ts || (a.trade_id < b.trade_id ? -1 : 1));

/** Gapless candles of `size` starting in [from, to) up to the one holding now, from the index trades. */
function expectedCandles(size: number, from: number, to: number): Candle[] {
  const candles: Candle[] = [];
  let previous: number | undefined;
  for (let t = Math.ceil(from / size) * size; t < to && t <= now; t += size) {
    const own = indexTrades.filter((x) => x.ts >= t && x.ts < t + size);
    const before = indexTrades.filter((x) => x.ts < t).at(-1);
    previous = own.at(-1)?.price ?? previous ?? before?.price;
    if (own.length === 0) {
      if (before) candles.push({ timestamp: t, open: before.price, high: before.price, low: before.price, close: before.price, volume: 0 });
      continue;
    }
    const prices = own.map((x) => x.price);
    candles.push({ timestamp: t, open: prices[0]!, high: Math.max(...prices), low: Math.min(...prices), close: prices.at(-1)!, volume: own.reduce((s, x) => s + x.quantity, 0) });
  }
  return candles;
}

/** The EUR rate of the bucket [t, t + size): kraken's cross when both legs traded in it, else the reference of its day. */
function expectedEur(t: number, size: number): { rate: number; source: string } {
  const kraken = trades.filter((x) => x.venue === 'kraken' && x.ts >= t && x.ts < t + size);
  const vwap = (quote: string) => {
    const legs = kraken.filter((x) => x.quote === quote);
    return legs.length ? legs.reduce((s, x) => s + x.price * x.quantity, 0) / legs.reduce((s, x) => s + x.quantity, 0) : undefined;
  };
  const eur = vwap('EUR');
  const usd = vwap('USD');
  if (eur !== undefined && usd !== undefined) return { rate: eur / usd, source: 'measured:kraken EUR/USD cross in the bucket' };
  return t >= D ? { rate: eurFrom, source: `reference:test-ref ${iso(D)}` } : { rate: eurBefore, source: `reference:test-ref ${iso(D - 3 * day)}` };
}

const close = (a: number, b: number) => Math.abs(a / b - 1) < 1e-9;

const api = useTestApi({
  keyName: 'range-test',
  seed: async (store) => {
    await store.insert('trades', trades);
    await store.insert('fx_reference_rates', referenceRows);
  },
});

describe('GET /v1/coins/{id}/ohlc?from=&to=', () => {
  const from = D - 8 * hour;
  const to = D + 12 * hour;

  it('serves the candles of the range, the first ones filled from the close before it', async () => {
    const res = await api.get(`/v1/coins/bitcoin/ohlc?interval=1h&from=${from}&to=${to}`);
    expect(res.status).toBe(200);
    const expected = expectedCandles(hour, from, to);
    expect(expected).toHaveLength(20);
    expect(expected[0]!.volume).toBe(0);
    expect(res.json).toEqual({ candles: expected, source: 'mds:trades', rate: 1, currency: 'usd', coverage: 'full', gaps: [] });
    // ISO 8601 names the same range; a range that is not on the grid starts at the next interval.
    const isoRes = await api.get(`/v1/coins/bitcoin/ohlc?interval=1h&from=${new Date(from).toISOString()}&to=${encodeURIComponent(new Date(to).toISOString().replace('Z', '+00:00'))}`);
    expect(isoRes.text).toBe(res.text);
    const offGrid = (await api.get(`/v1/coins/bitcoin/ohlc?interval=1h&from=${from + 1}&to=${to}`)).json as { candles: Candle[] };
    expect(offGrid.candles).toEqual(expected.slice(1));
  });

  it('keys the response cache on from and to', async () => {
    const other = (await api.get(`/v1/coins/bitcoin/ohlc?interval=1h&from=${from - 5 * hour}&to=${to}`)).json as { candles: Candle[] };
    expect(other.candles).toEqual(expectedCandles(hour, from - 5 * hour, to));
    const to5m = (await api.get(`/v1/coins/bitcoin/ohlc?interval=5m&from=${D}&to=${D + hour}`)).json as { candles: Candle[] };
    expect(to5m.candles).toEqual(expectedCandles(5 * minute, D, D + hour));
  });

  it('ends at the interval that holds now, and with to alone serves the default count before it', async () => {
    const res = (await api.get(`/v1/coins/bitcoin/ohlc?interval=1h&from=${D}`)).json as { candles: Candle[] };
    expect(res.candles).toEqual(expectedCandles(hour, D, now + 1));
    expect(res.candles.at(-1)!.timestamp).toBe(Math.floor(now / hour) * hour);
    const toOnly = (await api.get(`/v1/coins/bitcoin/ohlc?interval=4h&to=${D}`)).json as { candles: Candle[] };
    expect(toOnly.candles).toEqual(expectedCandles(4 * hour, D - 540 * 4 * hour, D));
  });

  it('converts each candle at the rate of its own time, across the day the reference changes and a measured bucket', async () => {
    const res = await api.get(`/v1/coins/bitcoin/ohlc?interval=1h&from=${from}&to=${to}&vs=eur`);
    expect(res.status).toBe(200);
    const body = res.json as { candles: Candle[]; rate: number; rates: { since: number; rate: number; source: string }[]; currency: string };
    const usd = expectedCandles(hour, from, to);
    expect(body.candles.map((c) => c.timestamp)).toEqual(usd.map((c) => c.timestamp));
    for (const [i, c] of body.candles.entries()) {
      const { rate } = expectedEur(c.timestamp, hour);
      for (const field of ['open', 'high', 'low', 'close'] as const) expect(close(c[field], usd[i]![field] * rate), `${c.timestamp} ${field}`).toBe(true);
      expect(c.volume).toBe(usd[i]!.volume);
    }
    const measuredHour = Math.floor(measuredAt / hour) * hour;
    expect(expectedEur(measuredHour, hour).source).toMatch(/^measured/);
    expect(body.rates.map(({ since, source }) => ({ since, source }))).toEqual([
      { since: from, source: `reference:test-ref ${iso(D - 3 * day)}` },
      { since: D, source: `reference:test-ref ${iso(D)}` },
      { since: measuredHour, source: 'measured:kraken EUR/USD cross in the bucket' },
      { since: measuredHour + hour, source: `reference:test-ref ${iso(D)}` },
    ]);
    for (const r of body.rates) expect(close(r.rate, expectedEur(r.since, hour).rate)).toBe(true);
    // The current rate: today's reference.
    expect(body.rate).toBe(eurFrom);
    expect(body.currency).toBe('eur');
  });

  it.each([
    ['from >= to', `from=${D}&to=${D}`, 'from', 'before to'],
    ['to before from', `from=${D}&to=${D - hour}`, 'from', 'before to'],
    ['an unparseable from', 'from=yesterday', 'from', 'unix ms or an ISO 8601'],
    ['a date-time without a zone', 'from=2026-10-14T00:00:00&to=2026-10-15', 'from', 'ISO 8601'],
    ['an unparseable to', `from=${D}&to=12abc`, 'to', 'unix ms'],
    ['a range longer than 7 days of 1m', `interval=1m&from=${D - 8 * day}&to=${D}`, 'to', '7 days'],
    ['a range longer than 366 days of 1h', `interval=1h&from=${D - 367 * day}&to=${D}`, 'to', '366 days'],
  ])('refuses %s with 400 and the error body', async (_what, query, name, words) => {
    const res = await api.get(`/v1/coins/bitcoin/ohlc?${query}`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: { code: 'bad_request', message: expect.stringContaining(`invalid parameter ${name}`), status: 400 } });
    expect((res.json as { error: { message: string } }).error.message).toContain(words);
  });
});

describe('GET /v1/coins/{id}/chart?from=&to=', () => {
  const from = D - 8 * hour;
  const to = D + 12 * hour;

  it('draws 5-minute closes for a 20 h range, each converted at the rate of its own bucket', async () => {
    const res = await api.get(`/v1/coins/bitcoin/chart?from=${from}&to=${to}&vs=eur`);
    expect(res.status).toBe(200);
    const body = res.json as { range: string; from: number; to: number; coverage: string; points: [number, number][]; rates: { since: number; source: string }[] };
    expect(body).toMatchObject({ range: 'custom', from, to, coverage: 'full', currency: 'eur' });
    const size = 5 * minute;
    const expected = expectedCandles(size, from, to)
      .filter((c) => c.volume > 0)
      .map((c): [number, number] => [c.timestamp, c.close * expectedEur(c.timestamp, size).rate]);
    expect(expected.length).toBeGreaterThan(10);
    expect(body.points.map(([t]) => t)).toEqual(expected.map(([t]) => t));
    for (const [i, [, v]] of body.points.entries()) expect(close(v, expected[i]![1])).toBe(true);
    expect(body.rates.map((r) => r.source)).toEqual([
      `reference:test-ref ${iso(D - 3 * day)}`,
      `reference:test-ref ${iso(D)}`,
      'measured:kraken EUR/USD cross in the bucket',
      `reference:test-ref ${iso(D)}`,
    ]);
  });

  it.each([
    ['range and from together', `range=7d&from=${D}`, 'range'],
    ['from >= to', `from=${D}&to=${D - 1}`, 'from'],
    ['a range longer than 7000 days', `from=0&to=${D}`, 'to'],
    ['an unparseable to', 'to=soon', 'to'],
  ])('refuses %s with 400 and the error body', async (_what, query, name) => {
    const res = await api.get(`/v1/coins/bitcoin/chart?${query}`);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: { code: 'bad_request', message: expect.stringContaining(`invalid parameter ${name}`), status: 400 } });
  });
});

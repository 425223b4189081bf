import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findAsset, supplyAt } from '../../../infra/catalog/catalog.ts';
import { KeyStore } from '../../../api/keys.ts';
import { startApi, type ApiServer } from '../../../api/server.ts';
import { get, indexQuotes, openTestStore, silentLog, testConfig, trade, type TradeRow } from '../../../test/support/harness.ts';
import { fearGreedResponse } from '../../../api/routes/fearGreed.ts';
import { fearGreedJob, percentileRank, updateFearGreed } from '../fearGreed.ts';

const DAY = 86_400_000;
// History that ended ten days ago, so that the job run with the real clock has it all.
const firstDay = Math.floor(Date.now() / DAY) - 150;
const days = 140;
const lastDay = firstDay + days - 1;
/** BTC has no trade that day (a collector outage): its return and reading must skip it. */
const btcGapDay = firstDay + 61;
/** solana starts trading later: dominance must compare over one universe. */
const solanaFrom = firstDay + 20;

/** Deterministic pseudo-random numbers in [0, 1). */
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const markets = {
  bitcoin: [
    { venue: 'binance', market: 'BTCUSDT', quote: 'USDT' },
    { venue: 'elsewhere', market: 'BTC-USD', quote: 'USD' },
  ],
  ethereum: [
    { venue: 'binance', market: 'ETHUSDC', quote: 'USDC' },
    // Not an index market: must be ignored.
    { venue: 'binance', market: 'ETHBTC', quote: 'BTC' },
  ],
  solana: [{ venue: 'binance', market: 'SOLUSDT', quote: 'USDT' }],
} as const;

function makeTrades(): TradeRow[] {
  const rows: TradeRow[] = [];
  const random = lcg(7);
  const price: Record<string, number> = { bitcoin: 40_000, ethereum: 2_500, solana: 100 };
  let id = 0;
  for (let d = firstDay; d <= lastDay; d++) {
    // Regimes: a calm rise, a crash, a recovery, so that every percentile moves.
    const drift = d < firstDay + 50 ? 0.004 : d < firstDay + 80 ? -0.02 : 0.01;
    for (const [asset, ms] of Object.entries(markets)) {
      if (asset === 'bitcoin' && d === btcGapDay) continue;
      if (asset === 'solana' && d < solanaFrom) continue;
      const vol = asset === 'bitcoin' ? 0.03 : 0.05;
      for (let k = 0; k < 4; k++) {
        price[asset]! *= Math.exp(drift / 4 + vol * (random() - 0.5));
        const m = ms[k % ms.length]!;
        const quantity = (1 + 9 * random()) * (d >= firstDay + 50 && d < firstDay + 60 ? 5 : 1) * (asset === 'bitcoin' ? 1 : 20);
        const p = m.quote === 'BTC' ? price[asset]! / price.bitcoin! : price[asset]!;
        rows.push(trade({ ...m, asset, trade_id: String(++id), ts: d * DAY + (1 + 6 * k) * 3_600_000, price: p, quantity }));
      }
    }
    // Two BTC trades in the last millisecond of the day: the close is the larger trade id as a string ('9…' > '10…').
    if (d !== btcGapDay && (d - firstDay) % 10 === 0) {
      const ts = (d + 1) * DAY - 1;
      rows.push(trade({ ...markets.bitcoin[0], asset: 'bitcoin', trade_id: `10-${d}`, ts, price: price.bitcoin! * 1.01, quantity: 1 }));
      rows.push(trade({ ...markets.bitcoin[1], asset: 'bitcoin', trade_id: `9-${d}`, ts, price: price.bitcoin! * 0.99, quantity: 1 }));
    }
  }
  return rows;
}

// ---- An independent recomputation, from the raw trades, of what the methodology says ----

interface Bar {
  close: number;
  volume: number;
}

function barsFromTrades(rows: readonly TradeRow[]): Map<string, Map<number, Bar>> {
  const out = new Map<string, Map<number, Bar>>();
  const lastKey = new Map<string, [number, string]>();
  for (const r of rows) {
    if (!indexQuotes.has(r.quote)) continue;
    const d = Math.floor(r.ts / DAY);
    const perAsset = out.get(r.asset) ?? new Map<number, Bar>();
    out.set(r.asset, perAsset);
    const bar = perAsset.get(d) ?? { close: NaN, volume: 0 };
    perAsset.set(d, bar);
    bar.volume += r.price * r.quantity;
    const k = `${r.asset}/${d}`;
    const prev = lastKey.get(k);
    if (!prev || r.ts > prev[0] || (r.ts === prev[0] && r.trade_id > prev[1])) {
      lastKey.set(k, [r.ts, r.trade_id]);
      bar.close = r.price;
    }
  }
  return out;
}

interface Expected {
  date: string;
  score: number;
  volatility: number | null;
  momentum: number | null;
  dominance: number | null;
  sigma?: number;
  drawdown?: number;
  trend?: number;
  volumeRatio?: number;
  domChange?: number;
}

function expectedReadings(bars: Map<string, Map<number, Bar>>, upToDay: number): Expected[] {
  const btc = bars.get('bitcoin')!;
  const circ = (asset: string, d: number) => supplyAt(findAsset(asset)!, (d + 1) * DAY - 1).circulating;
  const metric = new Map<number, { sigma?: number; drawdown?: number; trend?: number; volumeRatio?: number; domChange?: number }>();
  const btcDays = [...btc.keys()].sort((a, b) => a - b);
  for (const d of btcDays) {
    const m: { sigma?: number; drawdown?: number; trend?: number; volumeRatio?: number; domChange?: number } = {};
    const win = btcDays.filter((x) => x > d - 30 && x <= d);
    if (win.length >= 7) {
      const rets = win.filter((x) => btc.has(x - 1)).map((x) => Math.log(btc.get(x)!.close / btc.get(x - 1)!.close));
      if (rets.length >= 2) {
        const mu = rets.reduce((a, b) => a + b) / rets.length;
        m.sigma = Math.sqrt(rets.reduce((a, r) => a + (r - mu) ** 2, 0) / (rets.length - 1));
      }
      let peak = -Infinity;
      m.drawdown = 0;
      for (const x of win) {
        peak = Math.max(peak, btc.get(x)!.close);
        m.drawdown = Math.max(m.drawdown, (peak - btc.get(x)!.close) / peak);
      }
      m.trend = btc.get(d)!.close / (win.reduce((a, x) => a + btc.get(x)!.close, 0) / win.length) - 1;
      m.volumeRatio = btc.get(d)!.volume / (win.reduce((a, x) => a + btc.get(x)!.volume, 0) / win.length);
    }
    const common = [...bars.keys()].filter((a) => bars.get(a)!.has(d) && bars.get(a)!.has(d - 7));
    if (common.includes('bitcoin')) {
      const dom = (day: number) => {
        const caps = common.map((a) => bars.get(a)!.get(day)!.close * circ(a, day));
        return (100 * bars.get('bitcoin')!.get(day)!.close * circ('bitcoin', day)) / caps.reduce((x, y) => x + y);
      };
      m.domChange = dom(d) - dom(d - 7);
    }
    metric.set(d, m);
  }
  const rank = (d: number, key: 'sigma' | 'drawdown' | 'trend' | 'volumeRatio' | 'domChange') => {
    const v = metric.get(d)![key];
    const sample = btcDays.filter((x) => x > d - 90 && x <= d).map((x) => metric.get(x)![key]).filter((x) => x !== undefined);
    return v === undefined || sample.length < 7 ? undefined : percentileRank(v, sample);
  };
  const avg = (xs: (number | undefined)[]) => {
    const ok = xs.filter((x) => x !== undefined);
    return ok.length ? ok.reduce((a, b) => a + b) / ok.length : null;
  };
  const out: Expected[] = [];
  for (const d of btcDays.filter((x) => x <= upToDay)) {
    const m = metric.get(d)!;
    const [s, dd, t, v, dom] = (['sigma', 'drawdown', 'trend', 'volumeRatio', 'domChange'] as const).map((k) => rank(d, k));
    const volatility = avg([s === undefined ? undefined : 100 - s, dd === undefined ? undefined : 100 - dd]);
    const momentum = avg([t, v === undefined ? undefined : m.trend! > 0 ? v : 100 - v]);
    const dominance = dom === undefined ? null : 100 - dom;
    const parts = [
      [volatility, 25],
      [momentum, 25],
      [dominance, 10],
    ].filter(([c]) => c !== null) as [number, number][];
    if (!parts.length) continue;
    const score = Math.round(parts.reduce((a, [c, w]) => a + c * w, 0) / parts.reduce((a, [, w]) => a + w, 0));
    out.push({ date: new Date((d + 1) * DAY).toISOString().slice(0, 10), score, volatility, momentum, dominance, ...m });
  }
  return out;
}

// ---- Tests ----

let env: Awaited<ReturnType<typeof openTestStore>>;
let trades: TradeRow[];

beforeAll(async () => {
  env = await openTestStore();
  trades = makeTrades();
  await env.store.insert('trades', trades);
});
afterAll(async () => {
  await env?.dispose();
});

describe('fear & greed', () => {
  it('percentile rank counts ties half, so a value equal to all ranks 50', () => {
    expect(percentileRank(5, [5, 5, 5])).toBe(50);
    expect(percentileRank(3, [1, 2, 3, 4])).toBe(62.5);
    expect(percentileRank(1, [1, 2, 3, 4])).toBe(12.5);
  });

  it('writes nothing while history is too short for any component', async () => {
    expect(await updateFearGreed(env.store, (firstDay + 10) * DAY)).toEqual([]);
    expect(await env.store.rows('SELECT * FROM fear_greed_daily')).toEqual([]);
  });

  it('backfills every complete day from stored history, each recomputed independently from the trades', async () => {
    // Day 100 is complete and settled; day 101 has not ended yet.
    const now = (firstDay + 101) * DAY + 12 * 3_600_000;
    const written = await updateFearGreed(env.store, now);
    const expected = expectedReadings(barsFromTrades(trades), firstDay + 100);
    expect(expected.length).toBeGreaterThan(80);
    const stored = await env.store.rows<Record<string, any>>('SELECT *, toString(date) AS date FROM fear_greed_daily FINAL ORDER BY date');
    expect(written.length).toBe(expected.length);
    expect(stored.map((r) => r.date)).toEqual(expected.map((e) => e.date));
    // The BTC gap day has no reading of its own.
    expect(stored.map((r) => r.date)).not.toContain(new Date((btcGapDay + 1) * DAY).toISOString().slice(0, 10));
    for (const [i, e] of expected.entries()) {
      const r = stored[i]!;
      expect(r.score, e.date).toBe(e.score);
      for (const [col, want] of [
        ['volatility_score', e.volatility],
        ['momentum_score', e.momentum],
        ['dominance_score', e.dominance],
        ['realized_volatility', e.sigma ?? null],
        ['max_drawdown', e.drawdown ?? null],
        ['trend', e.trend ?? null],
        ['volume_ratio', e.volumeRatio ?? null],
        ['dominance_change', e.domChange ?? null],
      ] as const) {
        if (want === null) expect(r[col], `${e.date} ${col}`).toBeNull();
        else expect(r[col], `${e.date} ${col}`).toBeCloseTo(want, 9);
      }
    }
    // The market regimes show: the first week of the crash reads as extreme fear, the recovery well above it.
    const scores = new Map(stored.map((r) => [r.date, r.score as number]));
    const scoresOf = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => scores.get(new Date((firstDay + from + i + 1) * DAY).toISOString().slice(0, 10))!);
    expect(Math.max(...scoresOf(51, 55))).toBeLessThanOrEqual(25);
    expect(Math.min(...scoresOf(95, 100))).toBeGreaterThan(40);
    expect(new Set(stored.map((r) => r.label)).size).toBeGreaterThanOrEqual(3);
  });

  it('computes only missing days afterwards: nothing twice, then each new complete day once', async () => {
    const now = (firstDay + 101) * DAY + 13 * 3_600_000;
    expect(await updateFearGreed(env.store, now)).toEqual([]);
    const more = await updateFearGreed(env.store, (firstDay + 103) * DAY + 6 * 60_000);
    expect(more.map((r) => r.date)).toEqual([firstDay + 102, firstDay + 103]);
    const count = await env.store.rows<{ n: number }>('SELECT count() AS n FROM fear_greed_daily FINAL');
    expect(count[0]!.n).toBe(expectedReadings(barsFromTrades(trades), firstDay + 102).length);
  });

  it('the job runs the backfill up to now', async () => {
    await fearGreedJob.run({ store: env.store, log: silentLog, signal: new AbortController().signal });
    const dates = await env.store.rows<{ date: string }>('SELECT toString(max(date)) AS date FROM fear_greed_daily FINAL');
    // Our trades end at lastDay: the latest reading is published the day after it.
    expect(dates[0]!.date).toBe(new Date((lastDay + 1) * DAY).toISOString().slice(0, 10));
  });

  describe('GET /v1/fear-greed/history', () => {
    let api: ApiServer;
    let key: string;
    beforeAll(async () => {
      key = (await new KeyStore(env.store).create('fear-greed-test')).key;
      api = await startApi({ store: env.store, config: testConfig(), log: silentLog });
    });
    afterAll(async () => {
      await api?.close();
    });

    it('serves current, the daily series, lastMonth and the 30-day high and low', async () => {
      const res = await get(`${api.url}/v1/fear-greed/history`, { 'x-api-key': key });
      expect(res.status).toBe(200);
      const body = fearGreedResponse.parse(res.json) as any;
      const all = expectedReadings(barsFromTrades(trades), lastDay);
      const current = all.at(-1)!;
      expect(body.current).toMatchObject({ date: current.date, score: current.score });
      expect(body.current.components.volatility.score).toBeCloseTo(current.volatility!, 9);
      expect(body.current.components.momentum.volumeRatio).toBeCloseTo(current.volumeRatio!, 9);
      expect(body.current.components.dominance.weight).toBeCloseTo(10 / 60, 12);
      expect(body.current.historyDays).toBe(120 - 1); // the gap day is inside the 120-day window
      expect(body.series).toEqual(all.map((e) => ({ date: e.date, score: e.score })));

      const currentMs = Date.parse(current.date);
      const recent = all.filter((e) => Date.parse(e.date) > currentMs - 30 * DAY);
      const maxScore = Math.max(...recent.map((e) => e.score));
      const minScore = Math.min(...recent.map((e) => e.score));
      expect(body.high).toMatchObject({ score: maxScore, date: recent.filter((e) => e.score === maxScore).at(-1)!.date });
      expect(body.low).toMatchObject({ score: minScore, date: recent.filter((e) => e.score === minScore).at(-1)!.date });
      const monthAgo = all.filter((e) => Date.parse(e.date) <= currentMs - 30 * DAY).at(-1)!;
      expect(body.lastMonth).toMatchObject({ date: monthAgo.date, score: monthAgo.score });
      const labelOf = (s: number) => (s <= 25 ? 'Extreme Fear' : s <= 46 ? 'Fear' : s <= 54 ? 'Neutral' : s <= 75 ? 'Greed' : 'Extreme Greed');
      for (const r of [body.current, body.high, body.low, body.lastMonth]) expect(r.label).toBe(labelOf(r.score));
    });
  });
});

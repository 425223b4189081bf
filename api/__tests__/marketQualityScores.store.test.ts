// Liquidity scores (book -> book sink -> market_quality -> /v1/coins/{id}/markets) and the exchange
// score (/v1/exchanges, /v1/exchanges/{id}), each recomputed here from the raw rows and books we
// put in, in plain TypeScript (aggregate/METHODOLOGY.md, "Market quality and exchange score").
import { expect, test } from 'vitest';
import { startBookSink } from '../../aggregate/bookSink.ts';
import { expectedLiquidityScore, expectMatches, type Book, type Level } from '../../aggregate/__tests__/liquidityReference.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import { catalogVenues } from '../../infra/catalog/catalog.ts';
import { ccxtCatalogVenues } from '../../infra/catalog/ccxtCatalog.ts';
import type { BookEvent } from '../../infra/events.ts';
import { findNativeVenue } from '../../ingest/venues/registry.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { until } from '../../test/support/until.ts';
import { silentLog, trade, type TradeRow } from '../../test/support/harness.ts';

const now = Date.now();
const minute = 60_000;
const day = 86_400_000;
const usdQuotes = new Set(['USD', 'USDT', 'USDC']);

/** A book around `mid`: `levels` per side `stepBps` apart from `halfSpreadBps` out, each worth `usd` (asks times `askSkew`). */
function makeBook(mid: number, halfSpreadBps: number, stepBps: number, levels: number, usd: number, askSkew = 1): Book {
  const side = (sign: 1 | -1, worth: number): Level[] =>
    Array.from({ length: levels }, (_, i) => {
      const price = mid * (1 + (sign * (halfSpreadBps + i * stepBps)) / 10_000);
      return [price, worth / price];
    });
  return { bids: side(-1, usd), asks: side(1, usd * askSkew) };
}

/** Books the sink measures now; the market keys are venue:market. */
const books: Record<string, { asset: string; quote: string; book: Book }> = {
  'binance:BTCUSDT': { asset: 'bitcoin', quote: 'USDT', book: makeBook(90_000, 0.5, 1, 50, 400_000) },
  'binance:ETHUSDT': { asset: 'ethereum', quote: 'USDT', book: makeBook(3_000, 2, 3, 40, 30_000, 3) },
  'okx:BTC-USDT': { asset: 'bitcoin', quote: 'USDT', book: makeBook(90_010, 1, 5, 30, 20_000) },
  'coinbase:BTC-USD': { asset: 'bitcoin', quote: 'USD', book: makeBook(90_020, 3, 20, 20, 5_000, 0.2) },
  'binance-futures:BTCUSDT': { asset: 'bitcoin', quote: 'USDT', book: makeBook(90_050, 0.5, 2, 50, 150_000) },
  // Not valued in USD: the sink leaves it out.
  'kraken:XBT/EUR': { asset: 'bitcoin', quote: 'EUR', book: makeBook(83_000, 2, 5, 20, 10_000) },
};

/** The index runner's latest verdicts ('' = included). */
const verdicts = [
  { venue: 'binance', market: 'BTCUSDT', reason: '', ts: now - 3_000 },
  { venue: 'binance', market: 'ETHUSDT', reason: 'outlier', ts: now - 3_000 },
  { venue: 'okx', market: 'BTC-USDT', reason: 'stale', ts: now - 3_000 },
  // Its socket dropped: a data-quality problem of the venue like a stale book.
  { venue: 'okx', market: 'BTC-USDC', reason: 'disconnected', ts: now - 3_000 },
  { venue: 'coinbase', market: 'BTC-USD', reason: 'low_share', ts: now - 3_000 },
  { venue: 'coinbase', market: 'BTC-USDC', reason: 'crossed_book', ts: now - 3_000 },
  { venue: 'binance-futures', market: 'BTCUSDT', reason: 'perpetual', ts: now - 3_000 },
  { venue: 'bybit', market: 'BTCUSDT', reason: 'no_usd_rate', ts: now - 3_000 },
  // Ten minutes old: no longer a verdict on the venue's data.
  { venue: 'kraken', market: 'XBT/USD', reason: 'stale', ts: now - 10 * minute },
];

const trades: TradeRow[] = [];
let tradeId = 0;
/** One trade per `everyMin` minutes from `fromMin` minutes ago to `toMin` minutes ago. */
function tradeEvery(venue: string, market: string, asset: string, quote: string, fromMin: number, toMin: number, everyMin: number, price: number, quantity: number) {
  for (let m = fromMin; m >= toMin; m -= everyMin) {
    trades.push(trade({ venue, market, asset, quote, trade_id: String(++tradeId), ts: now - m * minute + 7_000, price, quantity }));
  }
}

const api = useTestApi({
  keyName: 'quality-scores-test',
  seed: async (store) => {
    // binance trades every minute for 3 h but for a 20-minute outage; the others less often.
    tradeEvery('binance', 'BTCUSDT', 'bitcoin', 'USDT', 180, 101, 1, 90_000, 30);
    tradeEvery('binance', 'BTCUSDT', 'bitcoin', 'USDT', 80, 1, 1, 90_000, 30);
    tradeEvery('binance', 'ETHUSDT', 'ethereum', 'USDT', 150, 2, 2, 3_000, 5);
    tradeEvery('okx', 'BTC-USDT', 'bitcoin', 'USDT', 120, 1, 5, 90_010, 0.5);
    tradeEvery('coinbase', 'BTC-USD', 'bitcoin', 'USD', 170, 3, 3, 90_020, 2);
    tradeEvery('binance-futures', 'BTCUSDT', 'bitcoin', 'USDT', 60, 1, 4, 90_050, 3);
    // kraken: a USD market whose fresh row has no score (stored before the score existed), and a EUR
    // market: its trades count for uptime, not among the USD-valued markets.
    tradeEvery('kraken', 'XBT/USD', 'bitcoin', 'USD', 100, 10, 10, 90_000, 1);
    tradeEvery('kraken', 'XBT/EUR', 'bitcoin', 'EUR', 95, 5, 10, 83_000, 1);
    // bybit: its only book is five minutes old.
    tradeEvery('bybit', 'BTCUSDT', 'bitcoin', 'USDT', 50, 1, 7, 90_000, 1);
    // bitstamp traded only 30 h ago: nothing measured in the window, no score.
    tradeEvery('bitstamp', 'BTCUSD', 'bitcoin', 'USD', 1_800, 1_800, 1, 90_000, 1);
    // A perpetual venue collected through ccxt: its channels come from the ccxt catalog.
    tradeEvery('apex-swap', 'BTC-USDT', 'bitcoin', 'USDT', 30, 1, 1, 90_000, 0.2);
    // A venue outside the catalog: its first trade 4 h ago is where our history starts.
    tradeEvery('elsewhere', 'BTC-USD', 'bitcoin', 'USD', 240, 200, 20, 90_000, 1);
    await store.insert('trades', trades);

    // The books go through the real sink.
    const bus = createMemoryBus();
    const sink = await startBookSink({ bus, store, log: silentLog, everyMs: 50 });
    bus.publish(
      Object.entries(books).map(([key, b]): BookEvent => {
        const [venue, market] = key.split(':') as [string, string];
        return { type: 'book', venue, market, asset: b.asset, quote: b.quote, ts: now - 2_000, receivedAt: now - 1_900, ...b.book };
      }),
    );
    await bus.flush();
    const stored = async () => ((await store.rows<{ n: number }>('SELECT count() AS n FROM market_quality')) as [{ n: number }])[0].n;
    await until(async () => (await stored()) === 5, 'the sink to store the five books', { everyMs: 50 });
    await sink.stop();
    await bus.close();
    const row = (venue: string, market: string, ts: number, score: number | null) => ({
      asset: 'bitcoin', venue, market, quote: 'USD', ts, spread_bps: 1, depth_bid_2: 1e6, depth_ask_2: 1e6, depth_bid_1: 1e6, depth_ask_1: 1e6,
      cost_buy: {}, cost_sell: {}, liquidity_score: score,
    });
    await store.insert('market_quality', [row('bybit', 'BTCUSDT', now - 5 * minute, 900), row('kraken', 'XBT/USD', now - 3_000, null)]);

    await store.insert(
      'index_constituents_latest',
      verdicts.map((v) => ({ asset: 'bitcoin', quote: 'USDT', price_usd: 90_000, volume_24h_usd: 1, weight: v.reason ? 0 : 1, excluded: v.reason !== '', ...v })),
    );
  },
});

const call = async (path: string) => {
  const res = await api.get(path);
  expect(res.status, path).toBe(200);
  return res.json as any;
};

/** The stored (rounded) score of each sinked book, checked against its unrounded value. */
function storedScore(key: string): number {
  const unrounded = expectedLiquidityScore(books[key]!.book, 1);
  // Our books are away from a .5 boundary, so the rounded value is unambiguous.
  expect(Math.abs(Math.abs(unrounded - Math.round(unrounded)) - 0.5)).toBeGreaterThan(1e-6);
  return Math.round(unrounded);
}

test('markets: the liquidity score of each fresh book, recomputed from its levels; null without one', async () => {
  const body = await call('/v1/coins/bitcoin/markets');
  const served = (venueId: string, quote: string) => body.markets.find((m: any) => m.venueId === venueId && m.quote === quote);
  for (const [k, venueId, quote] of [
    ['binance:BTCUSDT', 'binance', 'USDT'],
    ['okx:BTC-USDT', 'okx', 'USDT'],
    ['coinbase:BTC-USD', 'coinbase', 'USD'],
    ['binance-futures:BTCUSDT', 'binance-futures', 'USDT'],
  ] as const) {
    const m = served(venueId, quote);
    expectMatches(m.liquidityScore, expectedLiquidityScore(books[k]!.book, 1));
  }
  // The books differ enough for the scores to differ (a constant would not pass).
  const scores = ['binance:BTCUSDT', 'okx:BTC-USDT', 'coinbase:BTC-USD'].map(storedScore);
  expect(new Set(scores).size).toBe(3);
  // bybit's book is five minutes old; kraken's row has no score.
  expect(served('bybit', 'USDT').liquidityScore).toBeNull();
  expect(served('kraken', 'USD').liquidityScore).toBeNull();
});

/** The exchange score of aggregate/METHODOLOGY.md recomputed from the trades, books and verdicts above, at `at`. */
function expectedExchange(venueId: string, contract: 'spot' | 'perpetual', at: number) {
  const toS = Math.floor(at / minute) * 60;
  const fromS = toS - 86_400;
  const minutesOf = (venue: string) =>
    new Set(trades.filter((t) => t.venue === venue && t.ts >= fromS * 1000 && t.ts < toS * 1000).map((t) => Math.floor(t.ts / minute)));
  const allMinutes = trades.filter((t) => t.ts >= fromS * 1000 && t.ts < toS * 1000).map((t) => Math.floor(t.ts / minute) * 60);
  const historyStart = Math.max(fromS, Math.min(...allMinutes));
  const windowMinutes = (toS - historyStart) / 60;
  const traded = minutesOf(venueId).size;
  if (traded === 0) return null;

  // USD-valued markets over the 1-minute candles of the day (a candle counts when it starts in the window).
  const dayStart = Math.floor((at - day) / 1000) * 1000;
  const volumes = new Map<string, number>();
  for (const t of trades) {
    if (t.venue !== venueId || !usdQuotes.has(t.quote) || Math.floor(t.ts / minute) * minute < dayStart) continue;
    volumes.set(t.market, (volumes.get(t.market) ?? 0) + t.price * t.quantity);
  }
  const freshScore = (market: string): number | null => {
    const k = `${venueId}:${market}`;
    return books[k] && usdQuotes.has(books[k].quote) ? storedScore(k) : null;
  };
  let weighted = 0;
  let weights = 0;
  let fresh = 0;
  for (const [market, volume] of volumes) {
    const s = freshScore(market);
    if (s === null) continue;
    fresh++;
    weighted += volume * s;
    weights += volume;
  }
  const liquidityScore = weights > 0 ? weighted / weights : null;
  const venueVolume = [...volumes.values()].reduce((a, b) => a + b, 0);

  const native = findNativeVenue(venueId);
  const channels = native?.channels ?? ccxtCatalogVenues.find((v) => v.id === venueId)?.channels ?? [];
  const uptime = traded / windowMinutes;
  const bookFreshness = channels.includes('books') && volumes.size > 0 ? fresh / volumes.size : null;
  const judged = verdicts
    .filter((v) => v.venue === venueId && v.ts >= at - minute && v.reason !== 'perpetual' && v.reason !== 'no_usd_rate')
    .map((v) => v.reason);
  const flaggedShare = judged.length > 0 ? judged.filter((r) => ['disconnected', 'stale', 'crossed_book', 'outlier'].includes(r)).length / judged.length : null;
  const parts = [[uptime, 0.5], [bookFreshness, 0.25], [flaggedShare === null ? null : 1 - flaggedShare, 0.25]] as const;
  const applying = parts.filter(([v]) => v !== null);
  const dataQuality = applying.reduce((s, [v, w]) => s + v! * w, 0) / applying.reduce((s, [, w]) => s + w, 0);

  const scale = venueVolume > 0 ? Math.min(1, Math.max(0, (Math.log10(venueVolume) - 6) / 4)) : 0;
  const liquidations = contract === 'perpetual' && channels.includes('liquidations') ? (native?.liquidations?.sampled ? 0.5 : 1) : 0;
  const channelCoverage = (Number(channels.includes('trades')) + Number(channels.includes('books')) + liquidations) / (contract === 'perpetual' ? 3 : 2);
  const breakdown = { liquidity: (5 * (liquidityScore ?? 0)) / 1000, dataQuality: 2.5 * dataQuality, scale: 1.25 * scale, apiCoverage: 1.25 * channelCoverage };
  return {
    score: breakdown.liquidity + breakdown.dataQuality + breakdown.scale + breakdown.apiCoverage,
    breakdown,
    inputs: { liquidityScore, uptime, bookFreshness, flaggedShare, channelCoverage },
  };
}

const close = (actual: number | null, expected: number | null, what: string) => {
  if (expected === null || expected === 0) expect(actual, what).toBe(expected);
  else expect(Math.abs(actual! / expected - 1), `${what}: ${actual} vs ${expected}`).toBeLessThan(1e-9);
};

function expectScore(row: any, at: number) {
  const expected = expectedExchange(row.id, row.contract, at);
  if (expected === null) {
    expect(row, row.id).toMatchObject({ score: null, scoreBreakdown: null, scoreInputs: null });
    return null;
  }
  close(row.score, expected.score, `${row.id} score`);
  for (const k of ['liquidity', 'dataQuality', 'scale', 'apiCoverage'] as const) close(row.scoreBreakdown[k], expected.breakdown[k], `${row.id} ${k}`);
  for (const k of ['liquidityScore', 'uptime', 'bookFreshness', 'flaggedShare', 'channelCoverage'] as const) close(row.scoreInputs[k], expected.inputs[k], `${row.id} ${k}`);
  return expected;
}

test('exchange list: every venue scored from what we measured, recomputed from the raw rows', async () => {
  const body = await call('/v1/exchanges');
  expect(body.exchanges).toHaveLength(Math.min(100, catalogVenues.length));
  const scored = body.exchanges.filter((row: any) => expectScore(row, body.at) !== null).map((r: any) => r.id);
  expect(scored.sort()).toEqual(['apex-swap', 'binance', 'binance-futures', 'bybit', 'coinbase', 'kraken', 'okx']);
  const row = (id: string) => body.exchanges.find((r: any) => r.id === id);
  // What each case exercises, so the recomputation above is not vacuous.
  expect(row('binance').scoreInputs.flaggedShare).toBe(0.5);
  expect(row('binance').scoreInputs.uptime).toBeLessThan(1);
  expect(row('binance').scoreBreakdown.scale).toBeGreaterThan(0);
  expect(row('okx').scoreInputs.flaggedShare).toBe(1);
  expect(row('binance-futures').scoreInputs).toMatchObject({ flaggedShare: null, channelCoverage: 2.5 / 3 });
  expect(row('bybit').scoreInputs).toMatchObject({ liquidityScore: null, bookFreshness: 0, flaggedShare: null });
  expect(row('bybit').scoreBreakdown.liquidity).toBe(0);
  expect(row('kraken').scoreInputs).toMatchObject({ liquidityScore: null, bookFreshness: 0, flaggedShare: null });
  expect(row('apex-swap').scoreInputs).toMatchObject({ channelCoverage: 2 / 3, bookFreshness: 0 });
  expect(row('bitstamp').score).toBeNull();
  for (const r of body.exchanges) if (r.score !== null) expect(r.score).toBeLessThanOrEqual(10);
});

test('one exchange carries the same score and breakdown', async () => {
  for (const id of ['binance', 'coinbase', 'bitstamp']) {
    const body = await call(`/v1/exchanges/${id}`);
    expectScore(body.exchange, body.at);
  }
});

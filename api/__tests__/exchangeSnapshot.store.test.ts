// One response, one snapshot (issue 25): /v1/exchanges/{id} and /v1/exchanges served from a store on
// which trades land before every read the route makes (landingStore.ts). A row's totals, its score's
// market inputs and the current day of its volume history must still be those of the markets it
// serves, and every figure must equal a recomputation from the trades written here, the landed ones
// that its one read saw among them. The trades cross the edges of the 24 h window (1-minute buckets
// starting at or after the second of at - 24 h) and of the current UTC day; the clock is fixed.
import { expect, test } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { get, trade, type TradeRow } from '../../test/support/harness.ts';
import { landingStore } from './landingStore.ts';

const minute = 60_000;
const day = 86_400_000;
// Not on a whole minute or second, so that the window's first minute is cut.
const now = Math.floor(Date.now() / minute) * minute + 23_456;
const todayStart = Math.floor(now / day) * day;
const dayEdge = now - day;
const firstWholeMinute = Math.floor(dayEdge / minute) * minute + minute;

const markets = {
  BTCUSDT: { asset: 'bitcoin', quote: 'USDT' },
  ETHUSDC: { asset: 'ethereum', quote: 'USDC' },
  SOLUSD: { asset: 'solana', quote: 'USD' },
  // Not valued in USD: in no figure.
  ETHBTC: { asset: 'ethereum', quote: 'BTC' },
} as const;
/** Liquidity scores of the fresh books written here; SOLUSD's book is two minutes old: none. */
const freshScores: Record<string, number> = { BTCUSDT: 800, ETHUSDC: 300 };

let tradeId = 0;
function binanceTrade(market: string, ts: number, price: number, quantity: number): TradeRow {
  const m = markets[market as keyof typeof markets] ?? { asset: 'bitcoin', quote: 'USDT' };
  return trade({ venue: 'binance', market, ...m, trade_id: String(++tradeId), ts, price, quantity });
}
const seeded: TradeRow[] = [];
/** The trades of each landing: which test (its market prefix), which read (n). */
const landings: { prefix: string; n: number; trades: TradeRow[] }[] = [];

const api = useTestApi({
  keyName: 'exchange-snapshot-test',
  now,
  seed: async (store) => {
    const times = [
      now - 3 * day + 7 * minute,
      now - 2 * day - 5 * minute,
      dayEdge - 1,
      // Inside the 24 h but in the minute that starts before it: the window's buckets leave it out.
      dayEdge + 1,
      firstWholeMinute - 1,
      firstWholeMinute,
      todayStart - 1,
      todayStart,
      now - 5 * minute,
      now - minute,
    ];
    seeded.push(...Object.keys(markets).flatMap((market, i) => times.map((ts, j) => binanceTrade(market, ts + i, 100 + 7 * i + j, 1 + ((i + j) % 4)))));
    await store.insert('trades', seeded);
    const book = (market: string, ts: number, score: number) => ({
      asset: 'bitcoin', venue: 'binance', market, quote: 'USD', ts, spread_bps: 1, depth_bid_2: 1e6, depth_ask_2: 1e6, depth_bid_1: 1e6, depth_ask_1: 1e6,
      cost_buy: {}, cost_sell: {}, liquidity_score: score,
    });
    await store.insert('market_quality', [book('BTCUSDT', now - 5_000, 800), book('ETHUSDC', now - 5_000, 300), book('SOLUSD', now - 2 * minute, 500)]);
  },
});

/** A BTCUSDT trade and a new market land before each read: `<prefix><n>USDT` tells which landings a read saw. */
function landing(prefix: string) {
  return landingStore(api.store, async (n) => {
    const trades = [binanceTrade('BTCUSDT', now - 1_000 + n, 90 + n, 1), binanceTrade(`${prefix}${n}USDT`, now - 1_000, 1_000 + n, 2)];
    landings.push({ prefix, n, trades });
    await api.store.insert('trades', trades);
  });
}
/** The trades of the landings of `prefix` up to the k-th. */
const landedTrades = (prefix: string, k = Infinity) => landings.filter((l) => l.prefix === prefix && l.n <= k).flatMap((l) => l.trades);

const isUsd = (t: TradeRow) => t.quote !== 'BTC';
/** In the 24 h window of `at`: its 1-minute bucket starts at or after the second of at - 24 h. */
const inDay = (t: TradeRow, at: number) => Math.floor(t.ts / minute) * minute >= Math.floor((at - day) / 1000) * 1000;
const value = (t: TradeRow) => t.price * t.quantity;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Per market, from the trades: trades, USD volume (USD stablecoins at par here: no rate is measured) and last price. */
function expectedMarkets(trades: readonly TradeRow[], at: number) {
  const byMarket = new Map<string, TradeRow[]>();
  for (const t of trades.filter((t) => isUsd(t) && inDay(t, at))) byMarket.set(t.market, [...(byMarket.get(t.market) ?? []), t]);
  return new Map(
    [...byMarket].map(([market, list]) => [market, { trades: list.length, volume: sum(list.map(value)), price: list.reduce((a, b) => (b.ts >= a.ts ? b : a)).price }]),
  );
}

/** The score's liquidity input: the fresh books' scores weighted by their markets' 24 h volume. */
function expectedLiquidity(expected: ReturnType<typeof expectedMarkets>): number {
  const booked = Object.entries(freshScores).map(([market, score]) => [expected.get(market)!.volume, score] as const);
  return sum(booked.map(([v, s]) => v * s)) / sum(booked.map(([v]) => v));
}

const close = (actual: number, expected: number, what: string) => expect(Math.abs(actual / expected - 1), `${what}: ${actual} vs ${expected}`).toBeLessThan(1e-9);
/** The numbers of the landed markets (`<prefix><n>USDT`) among `names`, ascending. */
const landedIn = (names: readonly string[], prefix: string) =>
  names.filter((m) => m.startsWith(prefix)).map((m) => Number(m.slice(prefix.length, -'USDT'.length))).sort((a, b) => a - b);
const upTo = (k: number) => Array.from({ length: k }, (_, i) => i + 1);

test('one exchange while trades land: row totals, score inputs and the current day are those of the markets served', async () => {
  const writing = landing('LAND');
  const server = await api.serve({ store: writing.store });
  const body = (await get(`${server.url}/v1/exchanges/binance`, { 'x-api-key': api.key })).json as any;
  const { exchange: ex, at } = body;
  expect(at).toBe(now);

  // The one read saw landings 1..k, and later reads saw more: a second read would disagree.
  const seen = landedIn(ex.markets.map((m: any) => m.market), 'LAND');
  const k = seen.length;
  expect(seen).toEqual(upTo(k));
  expect(k).toBeGreaterThan(0);
  expect(writing.landed()).toBeGreaterThan(k);
  const visible = [...seeded, ...landedTrades('LAND', k)];

  // Every market, recomputed from the trades that read saw.
  const expected = expectedMarkets(visible, at);
  expect(new Set(ex.markets.map((m: any) => m.market))).toEqual(new Set(expected.keys()));
  for (const m of ex.markets) {
    const e = expected.get(m.market)!;
    expect(m.trades24h, m.market).toBe(e.trades);
    expect(m.price, m.market).toBe(e.price);
    close(m.volume24h, e.volume, `${m.market} volume`);
  }

  // The row: the sums of the markets served, to the last bit, and the score's inputs from the same markets.
  expect(ex.marketCount).toBe(ex.markets.length);
  expect(ex.trades24h).toBe(sum(ex.markets.map((m: any) => m.trades24h)));
  expect(ex.volume24h).toBe(sum(ex.markets.map((m: any) => m.volume24h)));
  close(ex.volume24h, sum([...expected.values()].map((e) => e.volume)), 'row volume');
  expect(ex.scoreInputs.bookFreshness).toBe(Object.keys(freshScores).length / expected.size);
  close(ex.scoreInputs.liquidityScore, expectedLiquidity(expected), 'liquidityScore');

  // Daily history: the past UTC days from the trades, and today exactly the trades of today that read saw.
  const byDay = new Map<string, number>();
  for (const t of visible.filter(isUsd)) {
    const date = new Date(t.ts).toISOString().slice(0, 10);
    byDay.set(date, (byDay.get(date) ?? 0) + value(t));
  }
  expect(ex.volumeHistory.map((h: any) => h.date)).toEqual([...byDay.keys()].sort());
  for (const h of ex.volumeHistory) close(h.volume, byDay.get(h.date)!, h.date);
  const today = ex.volumeHistory.at(-1);
  expect(today.date).toBe(new Date(todayStart).toISOString().slice(0, 10));
  close(today.volume, sum(visible.filter((t) => isUsd(t) && t.ts >= todayStart).map(value)), 'today');
  await server.close();
});

test('the exchange list while trades land: each row counts the markets its score was computed from', async () => {
  const writing = landing('LIST');
  const server = await api.serve({ store: writing.store });
  const body = (await get(`${server.url}/v1/exchanges`, { 'x-api-key': api.key })).json as any;
  expect(body.at).toBe(now);
  const row = body.exchanges.find((r: any) => r.id === 'binance');

  // The row's one read saw all that was written before this test, and its landings 1..k: one new market each.
  const earlier = [...seeded, ...landedTrades('LAND')];
  const k = row.marketCount - expectedMarkets(earlier, now).size;
  expect(k).toBeGreaterThan(0);
  expect(writing.landed()).toBeGreaterThan(k);
  const expected = expectedMarkets([...earlier, ...landedTrades('LIST', k)], now);

  expect(row.marketCount).toBe(expected.size);
  expect(row.trades24h).toBe(sum([...expected.values()].map((e) => e.trades)));
  close(row.volume24h, sum([...expected.values()].map((e) => e.volume)), 'row volume');
  expect(row.scoreInputs.bookFreshness).toBe(Object.keys(freshScores).length / row.marketCount);
  close(row.scoreInputs.liquidityScore, expectedLiquidity(expected), 'liquidityScore');
  await server.close();
});

// Every candle level (infra/migrations 0002-0015: trades -> candles_1m -> 5m -> ... -> 1w, each a
// materialized view over the block inserted into the level below) against a recomputation here,
// in plain TypeScript, from the raw trades.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Store } from '../../infra/store.ts';
import { openTestStore, type TradeRow } from '../../test/support/harness.ts';
import { seededRandom } from '../../simulator/market.ts';

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

/** Start of the bucket holding `ts` (unix ms); weeks start on Monday, 1970-01-01 was a Thursday. */
const levels: { table: string; bucketOf: (ts: number) => number }[] = [
  { table: 'candles_1m', bucketOf: (ts) => ts - (ts % minute) },
  { table: 'candles_5m', bucketOf: (ts) => ts - (ts % (5 * minute)) },
  { table: 'candles_15m', bucketOf: (ts) => ts - (ts % (15 * minute)) },
  { table: 'candles_1h', bucketOf: (ts) => ts - (ts % hour) },
  { table: 'candles_4h', bucketOf: (ts) => ts - (ts % (4 * hour)) },
  { table: 'candles_1d', bucketOf: (ts) => ts - (ts % day) },
  { table: 'candles_1w', bucketOf: (ts) => (Math.floor(ts / day) - ((Math.floor(ts / day) + 3) % 7)) * day },
];

const asset = 'viewcoin';
/** Two venues' markets share trade ids (each venue numbers its own), and one venue has two markets. */
const markets = [
  { venue: 'alpha', market: 'VIEWUSDT', quote: 'USDT' },
  { venue: 'beta', market: 'VIEW-USDT', quote: 'USDT' },
  { venue: 'alpha', market: 'VIEWUSDC', quote: 'USDC' },
];

/**
 * Trades over varied minutes. Prices are multiples of 1/4 and quantities of 1/64, so every sum and
 * product below is exact in Float64 whatever order the engine adds them in: the checks are equalities.
 */
function fixture(): TradeRow[] {
  const random = seededRandom(15);
  const out: TradeRow[] = [];
  const nextId = new Map<string, number>();
  const add = (m: (typeof markets)[number], ts: number, id?: string) => {
    const n = nextId.get(m.market) ?? 1;
    nextId.set(m.market, n + 1);
    out.push({
      venue: m.venue, market: m.market, asset, quote: m.quote,
      trade_id: id ?? String(n),
      ts,
      received_at: ts + Math.floor(random() * 5_000),
      price: 1000 + Math.floor(random() * 400) / 4,
      quantity: (1 + Math.floor(random() * 640)) / 64,
      side: random() < 0.5 ? 'buy' : 'sell',
    });
  };
  // A week boundary (Sunday 2026-01-04 -> Monday 2026-01-05), hence day, 4h, 1h ... boundaries too;
  // and a month boundary earlier (trades partitioned by month), in the previous week.
  const anchors = [Date.UTC(2026, 0, 5), Date.UTC(2026, 0, 1)];
  for (const anchor of anchors)
    for (const m of markets) {
      // Dense: the last minute before the boundary and the first after, many trades, some in the same ms.
      for (const start of [anchor - minute, anchor]) {
        for (let i = 0; i < 60; i++) {
          const ts = start + Math.floor(random() * minute);
          add(m, ts);
          if (i % 10 === 0) add(m, ts);
        }
      }
      // Last and first millisecond of the boundary's buckets.
      add(m, anchor - 1);
      add(m, anchor);
      // Sparse: one trade every few minutes for six hours either side, leaving quiet buckets at every level below 1d.
      for (let ts = anchor - 6 * hour; ts < anchor + 6 * hour; ts += (3 + Math.floor(random() * 40)) * minute) add(m, ts + Math.floor(random() * minute));
    }
  // Same-millisecond trades whose ids sort differently as strings and as numbers (k000009 is the smallest
  // number, the largest string): candles order by (ts, trade_id), trade_id a String (0001_trades.sql).
  // Mid-bucket, and as the last and first trades of the week; the same ids on the other venue's market
  // at the same millisecond, whose candles stay apart.
  const ties = [Date.UTC(2026, 0, 5, 2, 30, 0, 500), Date.UTC(2026, 0, 5) - 1, Date.UTC(2026, 0, 5)];
  ties.forEach((ts, k) => {
    for (const m of markets.slice(0, 2)) for (const id of ['0000010', '000009', '00000100', '0000099']) add(m, ts, `${k + 5}${id}`);
  });
  // Ids collide across markets everywhere else too (each market counts from 1); a market never repeats one.
  const seen = new Set<string>();
  return out.filter((t) => {
    const key = `${t.venue}/${t.market}/${t.trade_id}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

interface Candle {
  venue: string;
  market: string;
  t: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  quote_volume: number;
  n: number;
}

/** ClickHouse compares Strings bytewise; the strings here are ASCII, where that is JavaScript's order. */
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byTimeThenId = (a: TradeRow, b: TradeRow) => a.ts - b.ts || byteOrder(a.trade_id, b.trade_id);

function recompute(trades: readonly TradeRow[], bucketOf: (ts: number) => number): Candle[] {
  const groups = new Map<string, TradeRow[]>();
  for (const t of trades) {
    const key = `${t.venue}\u0000${t.market}\u0000${bucketOf(t.ts)}`;
    const group = groups.get(key);
    if (group) group.push(t);
    else groups.set(key, [t]);
  }
  const candles: Candle[] = [];
  for (const group of groups.values()) {
    const sorted = [...group].sort(byTimeThenId);
    candles.push({
      venue: sorted[0]!.venue,
      market: sorted[0]!.market,
      t: bucketOf(sorted[0]!.ts),
      open: sorted[0]!.price,
      high: Math.max(...sorted.map((t) => t.price)),
      low: Math.min(...sorted.map((t) => t.price)),
      close: sorted.at(-1)!.price,
      volume: sorted.reduce((s, t) => s + t.quantity, 0),
      quote_volume: sorted.reduce((s, t) => s + t.price * t.quantity, 0),
      n: sorted.length,
    });
  }
  return candles.sort((a, b) => byteOrder(a.venue, b.venue) || byteOrder(a.market, b.market) || a.t - b.t);
}

let store: Store;
let dispose: () => Promise<void>;
let sent: TradeRow[];

beforeAll(async () => {
  ({ store, dispose } = await openTestStore());
  sent = fixture();
  // Arrival out of order: shuffled, then stored in blocks of uneven size, so most buckets at every
  // level are built from partial states of several blocks, a later block often holding earlier trades.
  const random = seededRandom(7);
  const shuffled = [...sent];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  let block = 0;
  for (let from = 0; from < shuffled.length; block++) {
    const size = [1, 200, 37, 300, 3][block % 5]!;
    await store.insert('trades', shuffled.slice(from, from + size), `candle-views-${block}`);
    from += size;
  }
  expect(block).toBeGreaterThanOrEqual(8);
});
afterAll(async () => dispose());

test('the fixture has what the views must get right', () => {
  const perMinute = new Map<string, number>();
  for (const t of sent) perMinute.set(`${t.market}/${levels[0]!.bucketOf(t.ts)}`, (perMinute.get(`${t.market}/${levels[0]!.bucketOf(t.ts)}`) ?? 0) + 1);
  expect(Math.max(...perMinute.values())).toBeGreaterThan(50);
  expect([...perMinute.values()].filter((n) => n === 1).length).toBeGreaterThan(50);
  const sameMs = new Map<string, number>();
  for (const t of sent) sameMs.set(`${t.market}/${t.ts}`, (sameMs.get(`${t.market}/${t.ts}`) ?? 0) + 1);
  expect([...sameMs.values()].filter((n) => n > 1).length).toBeGreaterThan(10);
  const idsOf = (market: string) => new Set(sent.filter((t) => t.market === market).map((t) => t.trade_id));
  const beta = idsOf('VIEW-USDT');
  expect([...idsOf('VIEWUSDT')].filter((id) => beta.has(id)).length).toBeGreaterThan(100);
});

test.each(levels)('$table equals the recomputation from the raw trades, per market and bucket', async ({ table, bucketOf }) => {
  const rows = await store.rows<Candle>(
    `SELECT venue, market, toUnixTimestamp(bucket) * 1000 AS t, argMinMerge(open) AS open, max(high) AS high, min(low) AS low,
            argMaxMerge(close) AS close, sum(volume) AS volume, sum(quote_volume) AS quote_volume, toUInt32(sum(trade_count)) AS n
     FROM {table:Identifier} WHERE asset = {asset:String}
     GROUP BY venue, market, bucket ORDER BY venue, market, bucket`,
    { table, asset },
  );
  const expected = recompute(sent, bucketOf);
  expect(rows.length).toBe(expected.length);
  expect(rows).toEqual(expected);
});

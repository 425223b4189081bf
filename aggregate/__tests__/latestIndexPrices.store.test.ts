import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestStore } from '../../test/support/harness.ts';
import type { Store } from '../../infra/store.ts';
import { latestIndexPrices, type LatestIndexPrice, type MeasuredRule } from '../indexPrices/latestIndexPrices.ts';
import { IndexSummaryWrites, summaryBucketSeconds } from '../indexPrices/indexSummary.ts';

// The latest index price read from the 10-minute summaries and the rows they cannot stand for
// equals, field by field, what the test works out itself from every index row written: before any
// summary, with summaries, after rows a summary stands for are gone, and after seconds are computed
// again and their buckets summed up anew.

let env: Awaited<ReturnType<typeof openTestStore>>;
let store: Store;
beforeAll(async () => {
  env = await openTestStore();
  store = env.store;
});
afterAll(async () => {
  await env?.dispose();
});

type Status = 'ok' | 'single_venue' | 'fail_closed' | 'none';
interface Tick {
  asset: string;
  second: number;
  price: number;
  status: Status;
  volumeUsd: number;
  computedMs: number;
}

const hour = 3600;
const day = 86_400;
// Not on a bucket's edge; the 1 h and 24 h references and the window's start then fall inside buckets.
const nowS = 1_764_000_000 + 437;
const firstComputedMs = (nowS + 60) * 1000;
const mixedBucket = Math.floor((nowS - 8 * hour) / summaryBucketSeconds) * summaryBucketSeconds;
// measured = not carried: no price is stale and no disk too full under this rule.
const rule: MeasuredRule = { staleAfterMs: 1e15, minFreeBytes: 0 };

function tick(asset: string, second: number, price: number, fields: Partial<Tick> = {}): Tick {
  // Volumes in quarters: their sums are exact in any order, summaries or rows.
  return { asset, second, price, status: 'ok', volumeUsd: (second % 17) * 0.25, computedMs: firstComputedMs, ...fields };
}

/** Every row of the test, as written: the newest computation of a second wins. */
const written: Tick[] = [];

function ticks(): Tick[] {
  const out: Tick[] = [];
  // 'steady': a row every 7 minutes for 50 h, and one on each reference time and on the window's first second and the one before.
  for (let s = nowS - 50 * hour + 13; s <= nowS - 30; s += 420) out.push(tick('steady', s, 100 + (s % 1000) / 10));
  for (const s of [nowS - 2 * day - 1, nowS - 2 * day, nowS - day, nowS - day + 1, nowS - hour, nowS - hour + 1]) out.push(tick('steady', s, 50 + (s % 97)));
  // ...and six rows a minute apart in the bucket 8 h back.
  for (let k = 0; k < 6; k++) out.push(tick('steady', mixedBucket + 30 + 60 * k, 120 + k));
  // 'young': first priced 20 h ago (its 24 h reference is its oldest row); its latest row carried.
  for (let s = nowS - 20 * hour; s <= nowS - 100; s += 1800) out.push(tick('young', s, 3 + (s % 11) / 100));
  out.push(tick('young', nowS - 5, 2.5, { status: 'fail_closed' }));
  // 'lost': priced until 30 h ago, then a 'none' row: its latest price is the one before.
  for (let s = nowS - 40 * hour; s <= nowS - 30 * hour; s += 600) out.push(tick('lost', s, 7 + (s % 13)));
  out.push(tick('lost', nowS - 30 * hour + 300, 0, { status: 'none' }));
  // 'old': nothing in the 48 h.
  out.push(tick('old', nowS - 49 * hour, 1));
  // 'sparse': one row a day, a second of it computed twice (the newer computation wins).
  for (const s of [nowS - 47 * hour, nowS - 23 * hour, nowS - 10 * 60]) out.push(tick('sparse', s, 9 + (s % 5)));
  out.push(tick('sparse', nowS - 23 * hour, 11.5, { computedMs: firstComputedMs + 5 }));
  return out;
}

async function write(rows: Tick[]): Promise<void> {
  written.push(...rows);
  await store.insert(
    'index_ticks',
    rows.map((t) => ({
      asset: t.asset,
      second: t.second,
      price: t.price,
      status: t.status,
      constituents: ['v:M'],
      excluded: {},
      volume: 1,
      volume_usd: t.volumeUsd,
      trade_count: 1,
      last_trade_at: t.second * 1000 - 250,
      computed_at: t.computedMs,
    })),
  );
}

/** The latest index prices at `now`, worked out from the rows written (the rules of latestIndexPrices.ts). */
function expected(now: number): Map<string, LatestIndexPrice> {
  const newest = new Map<string, Tick>();
  for (const t of written) {
    const key = `${t.asset}/${t.second}`;
    const held = newest.get(key);
    if (!held || t.computedMs > held.computedMs) newest.set(key, t);
  }
  const byAsset = new Map<string, Tick[]>();
  for (const t of newest.values()) {
    if (t.status === 'none' || t.second < now - 2 * day || t.second > now) continue;
    byAsset.set(t.asset, [...(byAsset.get(t.asset) ?? []), t]);
  }
  const out = new Map<string, LatestIndexPrice>();
  for (const [asset, rows] of byAsset) {
    rows.sort((a, b) => a.second - b.second);
    const latest = rows.at(-1)!;
    const reference = (at: number) => {
      const t = rows.findLast((r) => r.second <= at) ?? rows[0]!;
      return { price: t.price, at: t.second * 1000 };
    };
    out.set(asset, {
      price: latest.price,
      second: latest.second * 1000,
      updatedAt: latest.second * 1000 - 250,
      measured: latest.status !== 'fail_closed',
      reference: { '1h': reference(now - hour), '24h': reference(now - day) },
      volume24hUsd: rows.filter((r) => r.second > now - day).reduce((sum, r) => sum + r.volumeUsd, 0),
    });
  }
  return out;
}

const assets = ['steady', 'young', 'lost', 'old', 'sparse'];
const read = (at = nowS) => latestIndexPrices(store, assets, at * 1000, rule);
const summaries = async () => (await store.rows<{ n: number }>('SELECT count() AS n FROM index_summary_10m FINAL WHERE priced_rows > 0'))[0]!.n;

describe('latestIndexPrices over the 10-minute summaries', () => {
  it('equals the prices worked out from the rows: rows alone, with summaries, summaries standing for removed rows, after a recomputation summed up again', async () => {
    await write(ticks());
    const summed = new IndexSummaryWrites();
    summed.note(nowS - 50 * hour, nowS);

    // No summary yet: every row of the 48 h is read.
    expect(Object.fromEntries(await read())).toEqual(Object.fromEntries(expected(nowS)));
    expect(await read()).toHaveProperty('size', 4);

    // Summaries up to the bucket 20 minutes before now: the rest is read as rows.
    const closedBefore = Math.floor((nowS - 1200) / summaryBucketSeconds) * summaryBucketSeconds;
    expect(await summed.write(store, closedBefore)).toBe((closedBefore - Math.floor((nowS - 50 * hour) / summaryBucketSeconds) * summaryBucketSeconds) / summaryBucketSeconds);
    expect(await summaries()).toBeGreaterThan(200);
    expect(Object.fromEntries(await read())).toEqual(Object.fromEntries(expected(nowS)));
    // Read earlier, the summaries after that time are left out.
    expect(Object.fromEntries(await read(nowS - 5 * hour))).toEqual(Object.fromEntries(expected(nowS - 5 * hour)));

    // The rows of a bucket well inside the 48 h removed (from both copies): its summary stands for them.
    const inside = Math.floor((nowS - 12 * hour) / summaryBucketSeconds) * summaryBucketSeconds;
    for (const table of ['index_ticks', 'index_ticks_by_time']) {
      await store.client.command({
        query: "DELETE FROM {table:Identifier} WHERE asset = 'steady' AND second >= toDateTime({from:UInt32}, 'UTC') AND second < toDateTime({to:UInt32}, 'UTC')",
        query_params: { table, from: inside, to: inside + summaryBucketSeconds },
      });
    }
    expect(Object.fromEntries(await read())).toEqual(Object.fromEntries(expected(nowS)));

    // Seconds computed again in summarised buckets: 'sparse' at its 1 h reference gets another price,
    // its 24 h reference (47 h ago) loses its price for its whole bucket, and 'steady' loses it for
    // half of the bucket 8 h back. Read with the old summaries, they differ...
    const again = firstComputedMs + 60_000;
    const recomputed = [
      tick('sparse', nowS - 23 * hour, 12.25, { computedMs: again, volumeUsd: 40 }),
      tick('sparse', nowS - 47 * hour, 0, { computedMs: again, status: 'none' }),
      ...written.filter((t) => t.asset === 'steady' && t.second >= mixedBucket && t.second < mixedBucket + 200).map((t) => ({ ...t, status: 'none' as const, computedMs: again })),
    ];
    expect(recomputed.length).toBeGreaterThanOrEqual(5);
    await write(recomputed);
    expect(Object.fromEntries(await read())).not.toEqual(Object.fromEntries(expected(nowS)));
    // ...summed up again, they are what the rows say.
    for (const t of recomputed) summed.note(t.second, t.second);
    expect(await summed.write(store, closedBefore)).toBe(3);
    const after = await read();
    expect(Object.fromEntries(after)).toEqual(Object.fromEntries(expected(nowS)));
    expect(after.get('sparse')!.reference['24h']).toEqual({ price: 12.25, at: (nowS - 23 * hour) * 1000 });
    expect(summed.pending).toBe(Math.ceil((nowS + 1 - closedBefore) / summaryBucketSeconds));
  });
});

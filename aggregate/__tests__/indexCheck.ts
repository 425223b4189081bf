import { expect } from 'vitest';
import type { Store } from '../../infra/store.ts';
import type { ReferenceTick } from './indexReference.ts';

// Compares what the index runner stored with the reference recomputation (indexReference.ts).

/** A row of index_ticks; status 'none' marks the second an asset lost its price. */
export interface StoredTick extends Omit<ReferenceTick, 'markets' | 'status'> {
  status: ReferenceTick['status'] | 'none';
}

export async function storedTicks(store: Store, asset: string): Promise<StoredTick[]> {
  return store.rows<StoredTick>(
    `SELECT toUnixTimestamp(second) AS second, price, toString(status) AS status, arraySort(constituents) AS constituents, excluded,
            volume, volume_usd AS volumeUsd, trade_count AS tradeCount, toUnixTimestamp64Milli(last_trade_at) AS lastTradeAt
     FROM index_ticks FINAL WHERE asset = {asset:String} ORDER BY second`,
    { asset },
  );
}

/** Equal to a relative 1e-9 (0 only to 0). */
export function relClose(a: number, b: number, what: string): void {
  if (Math.abs(a - b) > 1e-9 * Math.max(Math.abs(a), Math.abs(b))) throw new Error(`${what}: ${a} vs ${b}`);
}

/** The stored index of each second: the latest row at or before it; undefined when that row says `none` (no price). */
export function indexAt(rows: StoredTick[]): (second: number) => StoredTick | undefined {
  return (second) => {
    const latest = rows.findLast((r) => r.second <= second);
    return latest?.status === 'none' ? undefined : latest;
  };
}

/**
 * The stored index equals the reference at every second from `fromS` to `toS` (floats to a
 * relative 1e-9): its price, status, constituents, exclusions and last trade, and the volumes of
 * the second (a second without a row had no constituent trade).
 */
export function expectTicks(actual: StoredTick[], expected: ReferenceTick[], fromS: number, toS: number): void {
  const stored = indexAt(actual);
  const expectedAt = new Map(expected.map((t) => [t.second, t]));
  for (let s = fromS; s <= toS; s++) {
    const a = stored(s);
    const e = expectedAt.get(s);
    const at = `second ${s}`;
    if (!e) {
      expect(a, at).toBeUndefined();
      continue;
    }
    expect(a, at).toBeDefined();
    expect({ status: a!.status, constituents: a!.constituents, excluded: a!.excluded, lastTradeAt: a!.lastTradeAt }, at).toEqual({
      status: e.status,
      constituents: e.constituents,
      excluded: e.excluded,
      lastTradeAt: e.lastTradeAt,
    });
    relClose(a!.price, e.price, `${at} price`);
    const own = a!.second === s ? a! : { volume: 0, volumeUsd: 0, tradeCount: 0 };
    expect(own.tradeCount, `${at} trades`).toBe(e.tradeCount);
    relClose(own.volume, e.volume, `${at} volume`);
    relClose(own.volumeUsd, e.volumeUsd, `${at} volumeUsd`);
  }
}

/**
 * The 10-minute summaries of `asset` (index_summary_10m) of the buckets that end by `closedBefore`
 * (unix s) are those of its stored rows, worked out here: a bucket with rows has one, with the
 * count, first and last of its priced rows and their USD volume; a bucket without has none.
 */
export async function expectSummaries(store: Store, asset: string, closedBefore: number): Promise<void> {
  const bucketS = 600;
  const wanted = new Map<number, StoredTick[]>();
  for (const tick of await storedTicks(store, asset)) {
    const bucket = tick.second - (tick.second % bucketS);
    if (bucket + bucketS <= closedBefore) wanted.set(bucket, [...(wanted.get(bucket) ?? []), tick]);
  }
  const summaries = await store.rows<{ bucket: number; pricedRows: number; firstSecond: number; firstPrice: number; lastSecond: number; lastPrice: number; lastStatus: string; volumeUsd: number }>(
    `SELECT toUnixTimestamp(bucket) AS bucket, priced_rows AS pricedRows, toUnixTimestamp(first_second) AS firstSecond, first_price AS firstPrice,
            toUnixTimestamp(last_second) AS lastSecond, last_price AS lastPrice, toString(last_status) AS lastStatus, volume_usd AS volumeUsd
     FROM index_summary_10m FINAL WHERE asset = {asset:String} AND toUnixTimestamp(bucket) + ${bucketS} <= {closed:UInt32} ORDER BY bucket`,
    { asset, closed: closedBefore },
  );
  expect(summaries.map((s) => s.bucket)).toEqual([...wanted.keys()].sort((a, b) => a - b));
  for (const s of summaries) {
    const priced = wanted.get(s.bucket)!.filter((t) => t.status !== 'none');
    expect(s.pricedRows, `${asset} bucket ${s.bucket}`).toBe(priced.length);
    if (priced.length === 0) continue;
    const [first, last] = [priced[0]!, priced.at(-1)!];
    expect([s.firstSecond, s.firstPrice, s.lastSecond, s.lastPrice, s.lastStatus], `${asset} bucket ${s.bucket}`).toEqual([first.second, first.price, last.second, last.price, last.status]);
    relClose(s.volumeUsd, priced.reduce((sum, t) => sum + t.volumeUsd, 0), `${asset} bucket ${s.bucket} volume_usd`);
  }
}

import { readFileSync } from 'node:fs';
import type { Store } from '../../infra/store.ts';

/**
 * The 10-minute summaries of index_ticks (index_summary_10m, migration 0290) that the latest index
 * price reads in place of the 48 h of index rows (latestIndexPrices.sql). The index runner notes the
 * seconds it wrote and writes the summaries of a bucket, oldest first, once its live steps no longer
 * compute those seconds again, and again after it computed any of them anew (a revisit). A reader
 * takes index_ticks itself from the newest summary on: a summary not written yet costs reading, not
 * a price. On a start, the runner writes again those of the 48 h the readers take, since the one
 * before it may have stopped between a revisit's rows and their summaries.
 */

/** Length of a summary bucket, seconds (toStartOfInterval(second, INTERVAL 10 MINUTE) in the SQL). */
export const summaryBucketSeconds = 600;

/** Buckets written by one statement at most: 6 hours of index rows read at once. */
const bucketsPerRoll = 36;

const rollSql = readFileSync(new URL('./indexSummary.sql', import.meta.url), 'utf8');

/** The start of the bucket that holds `second` (unix s). */
export function summaryBucketOf(second: number): number {
  return Math.floor(second / summaryBucketSeconds) * summaryBucketSeconds;
}

/** Writes the summaries of the buckets from `from` up to `to` (unix s, bucket starts; `to` excluded) from index_ticks as it is now. */
export async function writeIndexSummaries(store: Store, from: number, to: number, rolledAtMs: number): Promise<void> {
  await store.client.command({
    query: rollSql,
    query_params: { from_s: from, to_s: to, rolled_at_ms: rolledAtMs },
    // chDB keeps the last insert's deduplication token on its shared session (infra/store.ts): a
    // token of its own, so that the block is never taken for a repeat of a sink's.
    clickhouse_settings: { insert_deduplication_token: `index-summary/${from}/${to}/${rolledAtMs}` },
  });
}

/** Runs of consecutive buckets (starts, ascending), each at most bucketsPerRoll long: [from, to) with `to` excluded. */
function runsOf(buckets: readonly number[]): { from: number; to: number }[] {
  const runs: { from: number; to: number }[] = [];
  for (const bucket of buckets) {
    const run = runs.at(-1);
    if (run && run.to === bucket && run.to - run.from < bucketsPerRoll * summaryBucketSeconds) run.to += summaryBucketSeconds;
    else runs.push({ from: bucket, to: bucket + summaryBucketSeconds });
  }
  return runs;
}

/**
 * The buckets an index runner wrote rows into and has not summed up since: `note` each range it
 * writes, `write` those no step of it computes again. A bucket noted again after its summary is
 * written gets a new one (a revisit, a recomputation), which replaces the first.
 */
export class IndexSummaryWrites {
  readonly #pending = new Set<number>();
  /** rolled_at of the last summaries: strictly increasing, so a newer summary of a bucket always wins. */
  #rolledAtMs = 0;

  /** Rows were written for seconds `from`..`to` (unix s). */
  note(from: number, to: number): void {
    for (let bucket = summaryBucketOf(from); bucket <= to; bucket += summaryBucketSeconds) this.#pending.add(bucket);
  }

  /** Buckets noted and not written yet. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Writes the summaries of the buckets noted that end at or before `closedBefore` (unix s), the
   * oldest first; a statement that fails leaves its buckets and the later ones noted. Returns the
   * buckets written.
   */
  async write(store: Store, closedBefore: number): Promise<number> {
    const due = [...this.#pending].filter((b) => b + summaryBucketSeconds <= closedBefore).sort((a, b) => a - b);
    for (const run of runsOf(due)) {
      this.#rolledAtMs = Math.max(Date.now(), this.#rolledAtMs + 1);
      await writeIndexSummaries(store, run.from, run.to, this.#rolledAtMs);
      for (let bucket = run.from; bucket < run.to; bucket += summaryBucketSeconds) this.#pending.delete(bucket);
    }
    return due.length;
  }
}

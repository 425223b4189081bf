import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drainPending } from 'chdb';
import { loadConfig, type Config } from '../../infra/config.ts';
import { createLogger } from '../../infra/log.ts';
import { migrate } from '../../infra/migrate.ts';
import { openStore, type Store } from '../../infra/store.ts';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule, IndexRunner } from '../../aggregate/indexRunner.ts';
import { copyStoreTemplate } from './storeTemplate.ts';

// MDS_TEST_LOG_LEVEL=debug shows the API's logs while a test runs.
export const silentLog = createLogger(process.env.MDS_TEST_LOG_LEVEL ?? 'silent');

/**
 * A migrated embedded store in a fresh temp dir: chDB binds one data dir per process at a time, so
 * one per test file, closed (dispose) before the next file in the process opens its own. A copy of
 * the run's template (test/support/storeTemplate.ts) where the store project made one, else
 * migrated here.
 */
export async function openTestStore(parent = tmpdir()): Promise<{ store: Store; dir: string; dispose(): Promise<void> }> {
  const dir = mkdtempSync(join(parent, 'mds-api-test-'));
  // The file before this one in the process closed its store; chDB frees the directory once drained.
  await drainPending();
  const copied = copyStoreTemplate(dir);
  const store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  if (!copied) await migrate(store);
  return {
    store,
    dir,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `store` with its queries counted (those `counted` picks, every one by default): how many a piece of code sends. */
export function countingQueries<S extends Pick<Store, 'rows'>>(store: S, counted: (query: string) => boolean = () => true): { store: S; count: () => number } {
  let queries = 0;
  const rows = <T>(query: string, params?: Record<string, unknown>) => {
    if (counted(query)) queries++;
    return store.rows<T>(query, params);
  };
  return { store: { ...store, rows }, count: () => queries };
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ PORT: '0', LOG_LEVEL: 'silent', ...env });
}

import type { TradeRow } from '../../aggregate/tradeSink.ts';
export type { TradeRow };

export function trade(fields: Omit<TradeRow, 'received_at' | 'side'> & Partial<Pick<TradeRow, 'side'>>): TradeRow {
  return { side: 'buy', received_at: fields.ts, ...fields };
}

/**
 * Computes the index price (aggregate/indexRunner.ts) of every second from `since` (default: 7 days,
 * the runner's backfill) before `now` up to `now` - 2 s, as the aggregate role does while it runs:
 * call it after storing trades. Computes again from `since` each time, so trades stored in any
 * order count. The reference recomputation for tests is aggregate/__tests__/indexReference.ts.
 */
export async function computeIndex(store: Store, now = Date.now(), sinceMs = defaultIndexSchedule.backfillMs): Promise<void> {
  // Large steps: test histories have few markets and long quiet spans.
  const schedule = { ...defaultIndexSchedule, maxSecondsPerTick: 3 * 86_400 };
  const runner = new IndexRunner({ store, log: silentLog, params: defaultIndexParams, schedule });
  await runner.catchUp(now, { from: Math.floor((now - sinceMs) / 1000) });
}

/** The quotes whose markets make up the index (USD and, at par, USDT and USDC). */
export const indexQuotes = new Set(['USD', 'USDT', 'USDC']);

export async function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await fetch(url, { method, headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

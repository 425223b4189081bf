// The import on the store itself: a ClickHouse server (CLICKHOUSE_URL), or the embedded store when
// no process holds it, opened here; and, on a node, the store it holds, for its store channel.
// Index history is computed in the process that holds the store.
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/log.ts';
import { openStore, type Store } from '../infra/store.ts';
import { indexSettingsFromConfig } from '../aggregate/indexRunner.ts';
import type { ImportTarget } from './importTarget.ts';
import { computeIndexSpan, type IndexSettings } from './indexSpan.ts';
import { chunkSpool, insertTradeChunk } from './tradeChunks.ts';

/** An import's calls are long (a chunk of a quarter million rows): deadlines of minutes. */
export const importTimeouts = { queryTimeoutMs: 600_000, insertTimeoutMs: 600_000 };

/** An import into `store` (which the caller closes after the target). */
export function storeTarget(store: Store, options: { embedded: boolean; index: IndexSettings; log: Logger }): ImportTarget {
  // Made at the first chunk chDB reads from a file: a service whose store channel never imports
  // leaves no directory behind, not even when it is killed.
  let spool: ReturnType<typeof chunkSpool> | undefined;
  const spoolDir = () => (spool ??= chunkSpool()).dir;
  return {
    description: store.description,
    rows: (query, params) => store.rows(query, params),
    insert: (table, rows, token) => store.insert(table, rows, token),
    insertTrades: (chunk) => insertTradeChunk(store, chunk, { embedded: options.embedded, spoolDir }),
    computeIndex: (span) => computeIndexSpan(store, options.index, span, options.log),
    close: async () => {
      spool?.close();
      spool = undefined;
    },
  };
}

/** Opens the configured store for an import: the embedded one must not be held by another process. */
export async function openDirectTarget(config: Config, log: Logger): Promise<ImportTarget> {
  const store = await openStore(config, importTimeouts);
  const target = storeTarget(store, { embedded: config.CLICKHOUSE_URL === undefined, index: indexSettingsFromConfig(config), log });
  return {
    ...target,
    async close() {
      await target.close();
      await store.close();
    },
  };
}

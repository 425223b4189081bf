// What an import needs of the store, wherever the store is: a ClickHouse server or an embedded
// store no process holds (opened here, directTarget.ts), or the embedded store of a running node
// (through its store channel, infra/storeChannel.ts, served by infra/roles/storeChannel.ts).
import type { StoreCalls } from '../infra/store.ts';
import type { Span } from './importFiles.ts';
import type { IndexSpanOutcome } from './indexSpan.ts';
import type { TradeChunk } from './tradeChunks.ts';

export interface ImportTarget extends StoreCalls {
  /** Where the trades go, for the summary: `chdb(./data/mds)`, `clickhouse(host/db)`, `the node holding ./data`. */
  readonly description: string;
  insertTrades(chunk: TradeChunk): Promise<void>;
  /** Computes the index history of trades stored in `span` (see indexSpan.ts). */
  computeIndex(span: Span): Promise<IndexSpanOutcome>;
  close(): Promise<void>;
}

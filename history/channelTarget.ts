// An import into the store of a running node, through its store channel (infra/storeChannel.ts):
// chunks travel as their tab-separated text and the node inserts them as an import on the store
// itself would (tradeChunks.ts); the node computes the index history of the span, and has its own
// index runner compute again what its live seconds hold. channelCommands() is the node's side.
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import type { ChannelCommand, StoreChannelClient } from '../infra/storeChannel.ts';
import { storeTarget } from './directTarget.ts';
import type { Span } from './importFiles.ts';
import type { ImportTarget } from './importTarget.ts';
import type { IndexSettings, IndexSpanOutcome } from './indexSpan.ts';
import type { TradeChunk } from './tradeChunks.ts';

export function channelTarget(client: StoreChannelClient, description: string): ImportTarget {
  return {
    description,
    rows: (query, params) => client.rows(query, params),
    insert: (table, rows, token) => client.insert(table, rows, token),
    async insertTrades({ tsv, ...chunk }) {
      await client.call('importTrades', { ...chunk }, tsv);
    },
    computeIndex: (span) => client.call<IndexSpanOutcome>('importIndex', { ...span }),
    close: async () => undefined,
  };
}

const spanArg = (args: Record<string, unknown>): Span => ({ from: Number(args.from), to: Number(args.to) });

/**
 * The node's side: `importTrades` and `importIndex` on the store it holds. `live`, the node's own
 * index runner where it runs one, computes again the seconds the import's span leaves to it.
 */
export function importChannelCommands(store: Store, options: { embedded: boolean; index: IndexSettings; log: Logger; live?: { noteInserted(minTsMs: number): void } }): { commands: Record<string, ChannelCommand>; close(): Promise<void> } {
  const target = storeTarget(store, options);
  const importTrades: ChannelCommand = async (args, payload) => {
    const chunk = { ...(args as Omit<TradeChunk, 'tsv'>), tsv: payload };
    await target.insertTrades(chunk);
    return null;
  };
  const importIndex: ChannelCommand = async (args) => {
    const outcome = await target.computeIndex(spanArg(args));
    if (outcome.liveFrom !== undefined) options.live?.noteInserted(outcome.liveFrom * 1000);
    return outcome;
  };
  return { commands: { importTrades, importIndex }, close: () => target.close() };
}

import { createHash } from 'node:crypto';
import { commitPositionsAfter, type Bus, type BusRecord, type Subscription } from '../infra/bus/bus.ts';
import type { TradeEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';

export interface TradeSinkOptions {
  bus: Bus;
  store: Store;
  log: Logger;
  /** Insert once this many trades are buffered... */
  batchRows: number;
  /** ...or once the oldest buffered trade has waited this long (ms). */
  batchMs: number;
  /** Consumer group; aggregators sharing it split the partitions. */
  group?: string;
}

export interface TradeSinkStats {
  received: number;
  inserted: number;
  /** Trades dropped because the store (or the same batch) already held them. */
  duplicates: number;
  batches: number;
  failedBatches: number;
}

export interface TradeSink {
  stats(): TradeSinkStats;
  /** Inserts what is buffered, commits, and stops consuming. */
  stop(): Promise<void>;
}

const retryDelayMs = 1_000;

/** The identity of a trade: a venue never reuses a trade id within a market. */
const tradeKey = (venue: string, market: string, tradeId: string) => `${venue}\u0000${market}\u0000${tradeId}`;

/**
 * Consumes `trades` from the bus and writes them to ClickHouse, at least once from the bus and
 * exactly once in the store: before each insert it drops the trades the store already holds
 * (venue + market + trade id), and it commits bus positions only after the insert. A replay
 * after a crash (inserted, not committed) therefore adds nothing to `trades` nor to the candles
 * and index prices the materialized views derive from it.
 */
export async function startTradeSink(options: TradeSinkOptions): Promise<TradeSink> {
  const { bus, store, log, batchRows, batchMs } = options;
  const stats: TradeSinkStats = { received: 0, inserted: 0, duplicates: 0, batches: 0, failedBatches: 0 };
  let buffer: BusRecord<'trades'>[] = [];
  let oldestAt = 0;
  // Inserts run one at a time, in order: a later batch never overtakes an earlier one.
  let queue: Promise<void> = Promise.resolve();
  let subscription: Subscription | undefined;

  const flush = (): Promise<void> => {
    queue = queue.then(async () => {
      if (buffer.length === 0) return;
      const records = buffer;
      buffer = [];
      try {
        await insertNew(records);
      } catch (err) {
        stats.failedBatches += 1;
        // Nothing was committed: requeue in front so the next flush retries the same trades.
        buffer = records.concat(buffer);
        oldestAt = Date.now();
        log.error({ err, trades: records.length }, 'trade batch insert failed; will retry');
        return;
      }
      await subscription?.commit(commitPositionsAfter(records)).catch((err: unknown) => {
        // The store already holds these trades; a replay is filtered out, so a lost commit costs only work.
        log.warn({ err }, 'commit after insert failed; the trades will be replayed and skipped');
      });
    });
    return queue;
  };

  async function insertNew(records: BusRecord<'trades'>[]): Promise<void> {
    const unique = new Map<string, TradeEvent>();
    for (const { event } of records) unique.set(tradeKey(event.venue, event.market, event.tradeId), event);
    const held = await heldKeys([...unique.values()]);
    const rows = [];
    for (const [key, e] of unique) {
      if (held.has(key)) continue;
      rows.push({
        venue: e.venue,
        market: e.market,
        asset: e.asset,
        quote: e.quote,
        trade_id: e.tradeId,
        ts: e.ts,
        received_at: e.receivedAt,
        price: e.price,
        quantity: e.quantity,
        side: e.side,
      });
    }
    stats.duplicates += records.length - rows.length;
    stats.batches += 1;
    if (rows.length === 0) return;
    // Same rows -> same token: a retried insert that had in fact landed is dropped by ClickHouse too.
    const token = createHash('sha256')
      .update(rows.map((r) => tradeKey(r.venue, r.market, r.trade_id)).join('\n'))
      .digest('hex');
    await store.insert('trades', rows, `trades:${token}`);
    stats.inserted += rows.length;
  }

  /** Keys of the given trades that the store already holds. */
  async function heldKeys(trades: TradeEvent[]): Promise<Set<string>> {
    if (trades.length === 0) return new Set();
    let from = Infinity;
    let to = -Infinity;
    const assets = new Set<string>();
    for (const t of trades) {
      from = Math.min(from, t.ts);
      to = Math.max(to, t.ts);
      assets.add(t.asset);
    }
    const rows = await store.rows<{ venue: string; market: string; trade_id: string }>(
      `SELECT venue, market, trade_id FROM trades
       WHERE asset IN {assets:Array(String)}
         AND ts BETWEEN fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
      { assets: [...assets], from, to },
    );
    return new Set(rows.map((r) => tradeKey(r.venue, r.market, r.trade_id)));
  }

  subscription = await bus.subscribe({
    group: options.group ?? 'aggregate-trades',
    topics: ['trades'],
    onAssignment: () => {
      // Uncommitted records will be delivered again to whoever owns their partition now.
      buffer = [];
    },
    onBatch: async (records) => {
      if (buffer.length === 0) oldestAt = Date.now();
      for (const r of records) buffer.push(r);
      stats.received += records.length;
      // While the store refuses inserts, hold delivery here: the bus lags instead of our memory growing.
      while (buffer.length >= batchRows) {
        await flush();
        if (buffer.length >= batchRows) await new Promise((r) => setTimeout(r, retryDelayMs));
      }
    },
  });

  const timer = setInterval(() => {
    if (buffer.length > 0 && Date.now() - oldestAt >= batchMs) void flush();
  }, Math.max(10, Math.floor(batchMs / 4)));

  return {
    stats: () => ({ ...stats }),
    async stop() {
      clearInterval(timer);
      await flush();
      await subscription?.stop();
      // Records delivered while the subscription was stopping.
      await flush();
    },
  };
}

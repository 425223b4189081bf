import { createHash } from 'node:crypto';
import { commitPositionsAfter, type Bus, type BusRecord, type Subscription } from '../infra/bus/bus.ts';
import type { EventOfTopic, Topic } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';

/**
 * How one topic lands in its raw table. An event's identity is venue + market + the venue's own
 * id (a venue never reuses an id within a market); the table has columns `venue`, `market`, `ts`,
 * `idColumn` and `scopeColumn`, the leading column of its sort key, which narrows the lookup.
 */
export interface DedupedTable<T extends Topic> {
  topic: T;
  table: string;
  /** Consumer group when the options name none. */
  group: string;
  idColumn: string;
  idOf(event: EventOfTopic[T]): string;
  scopeColumn: 'asset' | 'venue';
  row(event: EventOfTopic[T]): object;
}

const eventKey = (venue: string, market: string, id: string) => `${venue}\u0000${market}\u0000${id}`;
const marketKey = (venue: string, market: string) => `${venue}\u0000${market}`;

/**
 * What the sink knows of one venue + market in its table: no row is later than `ts`, and `ids`
 * are the ids held at exactly `ts` when the sink stored them itself (unknown when `ts` came from
 * the table). An event later than `ts` cannot be held, so only the others need the lookup: in
 * order, nearly none. Sound while this sink is the table's only writer of the market, as the bus
 * makes it (one partition per asset, one member per partition); forgotten on every assignment.
 */
interface LatestHeld {
  ts: number;
  ids?: Set<string>;
}

/** Per venue + market of the given events: the latest time the table holds at or after the earliest of them. */
async function latestHeldFrom<T extends Topic>(store: Store, target: DedupedTable<T>, events: readonly EventOfTopic[T][]): Promise<{ from: number; latest: Map<string, number> }> {
  let from = Infinity;
  const scopes = new Set<string>();
  for (const e of events) {
    from = Math.min(from, e.ts);
    scopes.add(e[target.scopeColumn]);
  }
  // Not `AS ts`: in ClickHouse an alias hides the column of the same name in WHERE.
  const rows = await store.rows<{ venue: string; market: string; latest: number }>(
    `SELECT venue, market, toUnixTimestamp64Milli(max(ts)) AS latest FROM {table:Identifier}
     WHERE {scopeColumn:Identifier} IN {scopes:Array(String)} AND ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
     GROUP BY venue, market`,
    { table: target.table, scopeColumn: target.scopeColumn, scopes: [...scopes], from },
  );
  return { from, latest: new Map(rows.map((r) => [marketKey(r.venue, r.market), r.latest])) };
}

/** Keys of the given events that the table already holds. */
async function heldKeys<T extends Topic>(store: Store, target: DedupedTable<T>, events: readonly EventOfTopic[T][]): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  let from = Infinity;
  let to = -Infinity;
  const scopes = new Set<string>();
  for (const e of events) {
    from = Math.min(from, e.ts);
    to = Math.max(to, e.ts);
    scopes.add(e[target.scopeColumn]);
  }
  const rows = await store.rows<{ venue: string; market: string; id: string }>(
    `SELECT venue, market, {idColumn:Identifier} AS id FROM {table:Identifier}
     WHERE {scopeColumn:Identifier} IN {scopes:Array(String)}
       AND ts BETWEEN fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    { idColumn: target.idColumn, table: target.table, scopeColumn: target.scopeColumn, scopes: [...scopes], from, to },
  );
  return new Set(rows.map((r) => eventKey(r.venue, r.market, r.id)));
}

export interface DedupingSinkOptions {
  bus: Bus;
  store: Store;
  log: Logger;
  /** Insert once this many events are buffered... */
  batchRows: number;
  /** ...or once the oldest buffered event has waited this long (ms). */
  batchMs: number;
  /** Consumer group; aggregators sharing it split the partitions. */
  group?: string;
  /**
   * Called after each insert that stored rows, with the event-time range (unix ms) of those rows:
   * the index runner computes again the seconds it had already passed (rows from a backlog).
   */
  onInserted?: (range: { minTs: number; maxTs: number }) => void;
}

export interface DedupingSinkStats {
  received: number;
  inserted: number;
  /** Events dropped because the store (or the same batch) already held them. */
  duplicates: number;
  batches: number;
  failedBatches: number;
}

export interface DedupingSink {
  stats(): DedupingSinkStats;
  /** Inserts what is buffered, commits, and stops consuming. */
  stop(): Promise<void>;
}

const retryDelayMs = 1_000;

/**
 * Consumes one topic and writes it to its raw table, at least once from the bus and exactly once
 * in the store: before each insert it drops the events the store already holds (`heldKeys`, asked
 * only for events no later than what the table holds of their market), and it commits bus
 * positions only after the insert. A replay after a crash (inserted, not committed)
 * therefore adds nothing to the table nor to the materialized views fed from it.
 */
export async function startDedupingSink<T extends Topic>(target: DedupedTable<T>, options: DedupingSinkOptions): Promise<DedupingSink> {
  const { bus, store, log, batchRows, batchMs } = options;
  const stats: DedupingSinkStats = { received: 0, inserted: 0, duplicates: 0, batches: 0, failedBatches: 0 };
  let buffer: BusRecord<T>[] = [];
  let oldestAt = 0;
  // Inserts run one at a time, in order: a later batch never overtakes an earlier one.
  let queue: Promise<void> = Promise.resolve();
  let subscription: Subscription | undefined;
  const latestHeld = new Map<string, LatestHeld>();
  /** Counts assignments: each one forgets `latestHeld`. */
  let assignment = 0;

  const flush = (): Promise<void> => {
    queue = queue.then(async () => {
      if (buffer.length === 0) return;
      const records = buffer;
      buffer = [];
      try {
        await insertNew(records);
      } catch (err) {
        stats.failedBatches += 1;
        // Nothing was committed: requeue in front so the next flush retries the same events.
        buffer = records.concat(buffer);
        oldestAt = Date.now();
        log.error({ err, table: target.table, events: records.length }, 'batch insert failed; will retry');
        return;
      }
      await subscription?.commit(commitPositionsAfter(records)).catch((err: unknown) => {
        // The store already holds these events; a replay is filtered out, so a lost commit costs only work.
        log.warn({ err, table: target.table }, 'commit after insert failed; the events will be replayed and skipped');
      });
    });
    return queue;
  };

  /** One distinct event of a batch, with its id and its market's key, each made once. */
  interface Candidate {
    key: string;
    market: string;
    id: string;
    event: EventOfTopic[T];
  }

  async function insertNew(records: BusRecord<T>[]): Promise<void> {
    const unique = new Map<string, Candidate>();
    for (const { event } of records) {
      const id = target.idOf(event);
      const key = eventKey(event.venue, event.market, id);
      unique.set(key, { key, market: marketKey(event.venue, event.market), id, event });
    }
    // This batch decides with the bounds known when it began; a rebalance meanwhile (a new
    // `assignment`) makes what it learns unfit to keep.
    const assignmentAtStart = assignment;
    const keep = (market: string, bound: LatestHeld) => void (assignment === assignmentAtStart && latestHeld.set(market, bound));
    const bounds = new Map<string, LatestHeld>();
    const unbounded: Candidate[] = [];
    for (const c of unique.values()) {
      const bound = latestHeld.get(c.market);
      if (bound) bounds.set(c.market, bound);
      else unbounded.push(c);
    }
    if (unbounded.length > 0) {
      const { from, latest } = await latestHeldFrom(store, target, unbounded.map((c) => c.event));
      for (const c of unbounded) {
        // A market with no row from `from` on holds nothing this late: its bound is just before.
        const bound = { ts: latest.get(c.market) ?? from - 1 };
        bounds.set(c.market, bound);
        keep(c.market, bound);
      }
    }
    /** Held for sure (true), new for sure (false), or only the table knows (undefined). */
    const knownHeld = ({ market, id, event }: Candidate): boolean | undefined => {
      const bound = bounds.get(market)!;
      if (event.ts > bound.ts) return false;
      if (event.ts === bound.ts && bound.ids) return bound.ids.has(id);
      return undefined;
    };
    const judged = [...unique.values()].map((c) => ({ c, known: knownHeld(c) }));
    const held = await heldKeys(store, target, judged.filter((j) => j.known === undefined).map((j) => j.c.event));
    const stored: Candidate[] = [];
    let minTs = Infinity;
    let maxTs = -Infinity;
    for (const { c, known } of judged) {
      if (known ?? held.has(c.key)) continue;
      stored.push(c);
      minTs = Math.min(minTs, c.event.ts);
      maxTs = Math.max(maxTs, c.event.ts);
    }
    stats.duplicates += records.length - stored.length;
    stats.batches += 1;
    if (stored.length === 0) return;
    // Same rows -> same token: a retried insert that had in fact landed is dropped by ClickHouse too.
    const token = createHash('sha256').update(stored.map((c) => c.key).join('\n')).digest('hex');
    try {
      await store.insert(target.table, stored.map((c) => target.row(c.event)), `${target.table}:${token}`);
    } catch (err) {
      // It may still land: these markets' bounds are asked of the table again.
      for (const c of stored) latestHeld.delete(c.market);
      throw err;
    }
    for (const c of stored) {
      const bound = bounds.get(c.market)!;
      if (c.event.ts > bound.ts) {
        const raised = { ts: c.event.ts, ids: new Set([c.id]) };
        bounds.set(c.market, raised);
        keep(c.market, raised);
      } else if (c.event.ts === bound.ts) bound.ids?.add(c.id);
    }
    stats.inserted += stored.length;
    options.onInserted?.({ minTs, maxTs });
  }

  subscription = await bus.subscribe({
    group: options.group ?? target.group,
    topics: [target.topic],
    onAssignment: () => {
      // Uncommitted records will be delivered again to whoever owns their partition now, and the
      // markets this member keeps may have been written by another meanwhile.
      buffer = [];
      latestHeld.clear();
      assignment += 1;
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

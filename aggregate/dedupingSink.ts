import { commitPositionsAfter, type Bus, type BusRecord, type Subscription } from '../infra/bus/bus.ts';
import type { EventOfTopic, Topic } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import { eventKey, heldKeys, latestHeldFrom, marketKey, type DedupedTable, type LatestHeld } from './heldEvents.ts';
import { SinkIntents } from './sinkIntents.ts';
import { partitionKey, planSlices, sliceToken, type OffsetRange, type Repeat, type Slice, type SlicePlan } from './sinkSlices.ts';

export type { DedupedTable } from './heldEvents.ts';

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
   * Called after each insert that stored rows, with the event-time range (unix ms) of those rows
   * and the first event time of each of their assets: the index runner computes again the seconds
   * it had already passed (rows from a backlog, a venue's recovery).
   */
  onInserted?: (range: InsertedRange) => void;
  /**
   * Awaited before each insert; throwing fails it (retried like a store failure). The trade sink
   * stores the collectors' gaps first: a gap is published before the live trade that found it, and
   * a trade stored before its gap would, after a crash, move the restart's recovery past that gap.
   */
  storeFirst?: () => Promise<void>;
}

export interface InsertedRange {
  minTs: number;
  maxTs: number;
  firstByAsset: ReadonlyMap<string, number>;
}

export interface DedupingSinkStats {
  received: number;
  inserted: number;
  /** Events dropped because the store (or the same batch) already held them. */
  duplicates: number;
  batches: number;
  failedBatches: number;
  /**
   * Inserts sent again under the token of an earlier one whose outcome was unknown: after an insert
   * failed, or for a partition taken over from a member that may have inserted it.
   */
  repeatedInserts: number;
}

export interface DedupingSink {
  stats(): DedupingSinkStats;
  /**
   * Inserts what is buffered, commits, and stops consuming. Once the store has failed (the last
   * flush failed) it inserts nothing more: what it holds stays uncommitted on the bus, logged.
   */
  stop(): Promise<void>;
  /** Inserts what is buffered now (after any insert under way); throws if the store refused it. */
  storeBuffered(): Promise<void>;
}

const retryDelayMs = 1_000;

/** One distinct event of a flush, with its id, its market's key and its slice, each made once. */
interface Candidate<T extends Topic> {
  key: string;
  market: string;
  id: string;
  event: EventOfTopic[T];
  slice: Slice<T>;
}

/** Held for sure (true), new for sure (false), or only the table knows (undefined). */
function knownHeld<T extends Topic>({ market, id, event, slice }: Candidate<T>, bounds: ReadonlyMap<string, LatestHeld>): boolean | undefined {
  // A repeated slice may be landing under another member's hand right now: only the table knows.
  if (slice.repeat) return undefined;
  const bound = bounds.get(market)!;
  if (event.ts > bound.ts) return false;
  if (event.ts === bound.ts && bound.ids) return bound.ids.has(id);
  return undefined;
}

/** Ranges that overlap an earlier one cannot be repeated as they were cut: left out, and said. */
function disjoint(ranges: readonly OffsetRange[], log: Logger): OffsetRange[] {
  const out: OffsetRange[] = [];
  for (const r of ranges) {
    const prior = out.at(-1);
    if (prior && r.first <= prior.last) log.warn({ range: r, prior }, 'overlapping sink intents: the later is not repeated');
    else out.push(r);
  }
  return out;
}

/**
 * What one flush stores and how (see startDedupingSink): the slices of its records, the events of
 * each the table does not hold, an insert per slice under its token, and what is known of each
 * market's latest held event until the next assignment.
 */
class SliceWriter<T extends Topic> {
  readonly #target: DedupedTable<T>;
  readonly #options: DedupingSinkOptions;
  readonly #stats: DedupingSinkStats;
  readonly #shared: boolean;
  readonly #intents: SinkIntents;
  readonly #latestHeld = new Map<string, LatestHeld>();
  /** Slices to insert again, exactly, before anything after them in their partitions. */
  #repeats: Repeat[] = [];
  /**
   * The rows this member sent (or was about to send) under each token whose outcome is unknown. A
   * repeat sends them again as they were, even where the table now holds them: an insert can land
   * in the table while a view fed from it fails (a full disk), and only the same block under the
   * same token reaches that view, the engine dropping the copy everywhere else
   * (deduplicate_blocks_in_dependent_materialized_views, infra/store.ts).
   */
  readonly #unknownOutcome = new Map<string, Candidate<T>[]>();
  /** Partitions whose intents were read since the assignment (shared mode). */
  readonly #takenOver = new Set<string>();
  /** Counts assignments: each one forgets what is known of the table, the repeats and the partitions taken over. */
  #assignment = 0;

  constructor(target: DedupedTable<T>, options: DedupingSinkOptions, group: string, stats: DedupingSinkStats) {
    this.#target = target;
    this.#options = options;
    this.#stats = stats;
    this.#shared = options.bus.membersAcrossProcesses;
    this.#intents = new SinkIntents(options.store, group);
  }

  get assignment(): number {
    return this.#assignment;
  }

  /** A rebalance: the markets this member keeps may have been written by another meanwhile. */
  reassigned(): void {
    this.#latestHeld.clear();
    this.#repeats = [];
    this.#unknownOutcome.clear();
    this.#takenOver.clear();
    this.#assignment += 1;
  }

  #tokenOf = (ranges: readonly OffsetRange[], records: readonly BusRecord<T>[]) =>
    sliceToken(
      this.#target.table,
      ranges,
      records.map(({ event }) => eventKey(event.venue, event.market, this.#target.idOf(event))),
    );

  /** Shared mode: the ranges a previous owner of these partitions may have inserted, to repeat first. */
  async #takeOver(records: readonly BusRecord<T>[]): Promise<void> {
    const firstOffsets = new Map<string, BusRecord<T>>();
    for (const r of records) {
      const key = partitionKey(r.topic, r.partition);
      if (this.#takenOver.has(key)) continue;
      const first = firstOffsets.get(key);
      if (!first || r.offset < first.offset) firstOffsets.set(key, r);
    }
    for (const [key, first] of firstOffsets) {
      const ranges = disjoint(await this.#intents.uncommitted(first.topic, first.partition, first.offset), this.#options.log);
      for (const range of ranges) this.#repeats.push({ ranges: [range] });
      this.#takenOver.add(key);
      if (ranges.length > 0) this.#options.log.info({ topic: first.topic, partition: first.partition, ranges: ranges.length }, 'partition taken over: repeating the inserts its last owner may have made');
    }
  }

  /** The bounds of the markets of `candidates` that are not known yet, read from the table. */
  async #boundsOf(candidates: readonly Candidate<T>[], keep: (market: string, bound: LatestHeld) => void): Promise<Map<string, LatestHeld>> {
    const bounds = new Map<string, LatestHeld>();
    const unbounded: Candidate<T>[] = [];
    for (const c of candidates) {
      const bound = this.#latestHeld.get(c.market);
      if (bound) bounds.set(c.market, bound);
      else unbounded.push(c);
    }
    if (unbounded.length > 0) {
      const { from, latest } = await latestHeldFrom(this.#options.store, this.#target, unbounded.map((c) => c.event));
      for (const c of unbounded) {
        // A market with no row from `from` on holds nothing this late: its bound is just before.
        const bound = { ts: latest.get(c.market) ?? from - 1 };
        bounds.set(c.market, bound);
        keep(c.market, bound);
      }
    }
    return bounds;
  }

  /** What a flush stores of each slice: its events the table does not hold, each once. */
  async #judge(plan: SlicePlan<T>) {
    const candidates = new Map<string, Candidate<T>>();
    for (const slice of plan.slices) {
      for (const { event } of slice.records) {
        const id = this.#target.idOf(event);
        const key = eventKey(event.venue, event.market, id);
        // An event twice in a flush counts in the first slice that has it.
        if (!candidates.has(key)) candidates.set(key, { key, market: marketKey(event.venue, event.market), id, event, slice });
      }
    }
    // This flush decides with the bounds known when it began; a rebalance meanwhile (a new
    // `assignment`) makes what it learns unfit to keep.
    const assignmentAtStart = this.#assignment;
    const keep = (market: string, bound: LatestHeld) => void (this.#assignment === assignmentAtStart && this.#latestHeld.set(market, bound));
    const bounds = await this.#boundsOf([...candidates.values()], keep);
    const judged = [...candidates.values()].map((c) => ({ c, known: knownHeld(c, bounds) }));
    const held = await heldKeys(this.#options.store, this.#target, judged.filter((j) => j.known === undefined).map((j) => j.c.event));
    const stored = new Map<Slice<T>, Candidate<T>[]>(plan.slices.map((s) => [s, []]));
    for (const { c, known } of judged) if (!(known ?? held.has(c.key))) stored.get(c.slice)!.push(c);
    return { candidates, stored, bounds, keep };
  }

  /** Inserts the new events of `records`, slice by slice; returns the records held back for a repeat. */
  async insertNew(records: BusRecord<T>[]): Promise<BusRecord<T>[]> {
    if (this.#shared) await this.#takeOver(records);
    const plan = planSlices(records, this.#repeats, this.#shared, this.#tokenOf);
    this.#repeats = plan.pending;
    if (plan.slices.length === 0) return plan.waiting;
    /** Slices sent, whose outcome is known or (the last, if the flush fails) unknown. */
    let sent = 0;
    let intentsWritten = false;
    const { candidates, stored, bounds, keep } = await this.#judge(plan).catch((err: unknown) => {
      this.#repeats = [...plan.slices.filter((s) => s.repeat).map((s) => ({ ranges: s.ranges })), ...plan.pending];
      throw err;
    });
    try {
      this.#stats.duplicates += records.length - plan.waiting.length - [...stored.values()].reduce((n, list) => n + list.length, 0);
      this.#stats.batches += 1;
      // Shared mode: a new slice's ranges are in the store before its insert leaves.
      if (this.#shared) {
        await this.#intents.write(plan.slices.filter((s) => !s.repeat && stored.get(s)!.length > 0).flatMap((s) => s.ranges));
        intentsWritten = true;
      }
      for (const slice of plan.slices) {
        sent += 1;
        await this.#insertSlice(slice, stored.get(slice)!, bounds, keep);
      }
    } catch (err) {
      // The insert that failed may still land, and those after it may have their intents written:
      // they are inserted again as they are, before anything else of their partitions.
      const again = plan.slices.filter((s, i) => i >= sent - 1 && (i === sent - 1 || s.repeat || intentsWritten));
      for (const s of again) this.#unknownOutcome.set(s.token, this.#unknownOutcome.get(s.token) ?? stored.get(s)!);
      this.#repeats = [...again.map((s) => ({ ranges: s.ranges })), ...plan.pending];
      for (const c of candidates.values()) this.#latestHeld.delete(c.market);
      throw err;
    } finally {
      // The copy of a repeated slice that another member sent may land after this flush read the
      // table: what the table holds of those markets is read again next time, not inferred.
      for (const c of candidates.values()) if (c.slice.repeat) this.#latestHeld.delete(c.market);
    }
    return plan.waiting;
  }

  /**
   * Inserts a slice: its events the table does not hold (`stored`), or, for a repeat of this
   * member's own insert, exactly the rows that insert carried. `inserted` counts the new ones.
   */
  async #insertSlice(slice: Slice<T>, stored: readonly Candidate<T>[], bounds: Map<string, LatestHeld>, keep: (market: string, bound: LatestHeld) => void): Promise<void> {
    const sent = (slice.repeat && this.#unknownOutcome.get(slice.token)) || stored;
    if (sent.length === 0) return;
    if (slice.repeat) this.#stats.repeatedInserts += 1;
    await this.#options.store.insert(this.#target.table, sent.map((c) => this.#target.row(c.event)), slice.token);
    this.#unknownOutcome.delete(slice.token);
    // The range of what was sent, not only of what is new: a view that missed it has it now.
    let minTs = Infinity;
    let maxTs = -Infinity;
    const firstByAsset = new Map<string, number>();
    for (const c of sent) {
      minTs = Math.min(minTs, c.event.ts);
      maxTs = Math.max(maxTs, c.event.ts);
      firstByAsset.set(c.event.asset, Math.min(firstByAsset.get(c.event.asset) ?? Infinity, c.event.ts));
      if (slice.repeat) continue;
      const bound = bounds.get(c.market)!;
      if (c.event.ts > bound.ts) {
        const raised = { ts: c.event.ts, ids: new Set([c.id]) };
        bounds.set(c.market, raised);
        keep(c.market, raised);
      } else if (c.event.ts === bound.ts) bound.ids?.add(c.id);
    }
    this.#stats.inserted += stored.length;
    this.#options.onInserted?.({ minTs, maxTs, firstByAsset });
  }
}

/**
 * Consumes one topic and writes it to its raw table, at least once from the bus and exactly once
 * in the store. Before each insert it drops the events the store already holds (`heldKeys`,
 * asked only for events no later than what the table holds of their market), and it commits bus
 * positions only after the insert: a replay after a crash (inserted, not committed) adds nothing
 * to the table nor to the materialized views fed from it.
 *
 * An insert whose outcome is unknown (it failed, timed out, or its sender died) may still land
 * later. Each insert is therefore a slice of bus ranges whose deduplication token depends only on
 * those ranges and their events (aggregate/sinkSlices.ts), and such a slice is inserted again,
 * exactly, before anything after it: whichever copy lands first is kept, the other dropped by the
 * engine. Where members of the group live in other processes (Kafka), slices are cut per
 * partition and their ranges recorded before the insert (sink_intents), so the member that takes
 * a partition over repeats the dead member's last slices before reading what the table holds.
 * Not covered: a member frozen past its session timeout that wakes up and sends an insert after
 * its successor has repeated its slices (Kafka's own fencing stops its commit, not its insert).
 */
export async function startDedupingSink<T extends Topic>(target: DedupedTable<T>, options: DedupingSinkOptions): Promise<DedupingSink> {
  const { bus, log, batchRows, batchMs } = options;
  const group = options.group ?? target.group;
  const stats: DedupingSinkStats = { received: 0, inserted: 0, duplicates: 0, batches: 0, failedBatches: 0, repeatedInserts: 0 };
  const writer = new SliceWriter(target, options, group, stats);
  let buffer: BusRecord<T>[] = [];
  let oldestAt = 0;
  /** Buffered records held back for a repeat that still lacks records: they do not call for a flush. */
  let waitingRecords = 0;
  // Inserts run one at a time, in order: a later batch never overtakes an earlier one.
  let queue: Promise<void> = Promise.resolve();
  let subscription: Subscription | undefined;
  /** The last flush failed: the store is down or hung, and a stop does not wait on it again. */
  let lastFlushFailed = false;
  let stopping = false;

  const flush = (): Promise<void> => {
    queue = queue.then(async () => {
      if (buffer.length === 0) return;
      const records = buffer;
      const atStart = writer.assignment;
      buffer = [];
      waitingRecords = 0;
      let waiting: BusRecord<T>[];
      try {
        await options.storeFirst?.();
        waiting = await writer.insertNew(records);
      } catch (err) {
        stats.failedBatches += 1;
        lastFlushFailed = true;
        // Nothing was committed: requeue in front so the next flush retries the same events.
        if (writer.assignment === atStart) buffer = records.concat(buffer);
        oldestAt = Date.now();
        log.error({ err, table: target.table, events: records.length }, 'batch insert failed; will retry');
        return;
      }
      lastFlushFailed = false;
      // A rebalance meanwhile: the bus delivers these records again to whoever owns them now.
      if (writer.assignment !== atStart) return;
      if (waiting.length > 0) {
        buffer = waiting.concat(buffer);
        waitingRecords = waiting.length;
      }
      const held = new Set(waiting);
      const done = records.filter((r) => !held.has(r));
      if (done.length === 0) return;
      await subscription?.commit(commitPositionsAfter(done)).catch((err: unknown) => {
        // The store already holds these events; a replay is filtered out, so a lost commit costs only work.
        log.warn({ err, table: target.table }, 'commit after insert failed; the events will be replayed and skipped');
      });
    });
    return queue;
  };

  subscription = await bus.subscribe({
    group,
    topics: [target.topic],
    onAssignment: () => {
      // Uncommitted records will be delivered again to whoever owns their partition now, and the
      // markets this member keeps may have been written by another meanwhile.
      buffer = [];
      waitingRecords = 0;
      writer.reassigned();
    },
    onBatch: async (records) => {
      if (buffer.length === waitingRecords) oldestAt = Date.now();
      for (const r of records) buffer.push(r);
      stats.received += records.length;
      // While the store refuses inserts, hold delivery here: the bus lags instead of our memory
      // growing. Records held back for a repeat wait for later ones: delivery goes on for them.
      // Stopping with the store failed, nothing more is inserted: what is delivered stays uncommitted.
      while (buffer.length - waitingRecords >= batchRows && !(stopping && lastFlushFailed)) {
        await flush();
        if (buffer.length - waitingRecords >= batchRows) await new Promise((r) => setTimeout(r, retryDelayMs));
      }
    },
  });

  const timer = setInterval(() => {
    if (buffer.length > waitingRecords && Date.now() - oldestAt >= batchMs) void flush();
  }, Math.max(10, Math.floor(batchMs / 4)));

  /** A stop's flush: after the one under way, unless the store failed (a last try would wait on it again). */
  const flushUnlessFailed = async () => {
    await queue;
    if (!lastFlushFailed) await flush();
  };

  return {
    stats: () => ({ ...stats }),
    async storeBuffered() {
      await flush();
      // A failed flush puts its records back; a rebalance may have dropped them since (the new
      // owner has them): with nothing left, nothing was refused.
      if (lastFlushFailed && buffer.length > 0) throw new Error(`${target.table}: the buffered events could not be stored`);
    },
    async stop() {
      stopping = true;
      clearInterval(timer);
      await flushUnlessFailed();
      await subscription?.stop();
      // Records delivered while the subscription was stopping.
      await flushUnlessFailed();
      if (lastFlushFailed && buffer.length > 0) {
        log.error(
          { table: target.table, events: buffer.length },
          'stopped with the store failing: these events were not inserted and stay uncommitted on the bus (Kafka delivers them again at the next start; the in-process bus loses them with the process)',
        );
      }
    },
  };
}

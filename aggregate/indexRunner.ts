import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import { LiveInputs, loadAssetsQuotedIn, type LiveInputReads, loadIndexInputs, loadIndexState, loadNextTradeSecond, loadQuoteRates, loadStoredSeconds, loadStoredThrough } from './indexInputs.ts';
import { indexParamsSchema, type IndexParams } from './indexPrice.ts';
import { quoteIndexAssets, quotesValuedBy, type QuoteRates } from './indexQuoteRate.ts';
import { sweepIndex, tickKey, type ConstituentRow, type IndexState, type IndexVerdicts, type PublishedIndex, type SweepRange, type SweepResult, type TickWrites } from './indexSweep.ts';
import { loadIndexRecomputeRequests } from './indexRecomputeRequests.ts';
import { IndexSummaryWrites } from './indexPrices/indexSummary.ts';
import { latestPriceLookbackSeconds } from './indexPrices/latestIndexPrices.ts';

/**
 * The index runner of the aggregate role: every second it computes the index price of every asset
 * for the seconds that ended at least `lagMs` ago and writes index_ticks and
 * index_constituents_latest. It recomputes a short trailing window so late trades land, goes back
 * further when the trade sink reports older trades stored late (noteInserted: for the assets of
 * those trades alone, or for every asset), catches up in bounded chunks after a pause, and resumes
 * from its own tables. Each step loads its inputs
 * (indexInputs.ts), sweeps the seconds (indexSweep.ts, pure) and writes the result, then the
 * 10-minute summaries of what it wrote that no live step computes again (indexPrices/indexSummary.ts).
 */

export const indexScheduleSchema = z.object({
  /** A second is computed once it ended this long ago (ms): trades still in the aggregator's batch land first. */
  lagMs: z.number().int().min(0).default(2_000),
  /** Seconds already computed that each step computes again, for trades that arrived late. */
  recomputeSeconds: z.number().int().min(0).default(10),
  /** Most seconds one step computes: catching up after a pause happens in steps of this size. */
  maxSecondsPerTick: z.number().int().positive().default(600),
  /**
   * Least time between two go-backs of the live loop for late trades (ms). A venue's recovery lands
   * its trades over a minute, market after market: going back at every step would compute the same
   * minute again each second, and the live seconds would wait behind it. catchUp goes back at once.
   */
  revisitEveryMs: z.number().int().min(0).default(5_000),
  /**
   * Most seconds of a revisit that one live step computes, after its live seconds; a longer revisit
   * goes on at the next steps. Each range reads its inputs again: ranges of 60 s cost the universe
   * demo's index half again as much reading as ranges of 600 (test/bench/RESULTS.md).
   */
  revisitSecondsPerStep: z.number().int().positive().default(600),
  /** With no index computed yet, start at most this far back (ms). */
  backfillMs: z.number().int().positive().default(7 * 86_400_000),
  /**
   * index_constituents_latest is written for at most one second in this many: each write is a row
   * per candidate market (thousands with the whole market), and its readers look 60 s back.
   * catchUp and stop write the last verdicts they hold.
   */
  constituentsEveryS: z.number().int().positive().default(5),
});
export type IndexSchedule = z.infer<typeof indexScheduleSchema>;
export const defaultIndexSchedule: IndexSchedule = indexScheduleSchema.parse({});

/** The last second a live runner computes at `now` (unix ms): the last one that ended at least lagMs before. */
export function lastDueSecond(now: number, schedule: Pick<IndexSchedule, 'lagMs'>): number {
  return Math.floor((now - schedule.lagMs) / 1000) - 1;
}

/** The first second a live runner still computes again at `now` (unix ms): its trailing window starts there. */
export function liveRecomputedFrom(now: number, schedule: Pick<IndexSchedule, 'lagMs' | 'recomputeSeconds'>): number {
  return lastDueSecond(now, schedule) + 1 - schedule.recomputeSeconds;
}

/**
 * The engine's parameters from the environment (infra/config.ts documents each one). A variable
 * left unset is undefined there, so its default is the one of the schemas above and in indexPrice.ts.
 */
export function indexSettingsFromConfig(config: Config): { params: IndexParams; schedule: IndexSchedule } {
  const fraction = (pct: number | undefined) => (pct === undefined ? undefined : pct / 100);
  return {
    params: indexParamsSchema.parse({
      outlierThreshold: fraction(config.INDEX_OUTLIER_PCT),
      outlierReadmitFraction: fraction(config.INDEX_OUTLIER_READMIT_PCT),
      minShare: fraction(config.INDEX_MIN_SHARE_PCT),
      staleMinMs: config.INDEX_STALE_MIN_MS,
      staleMaxMs: config.INDEX_STALE_MAX_MS,
      staleIntervals: config.INDEX_STALE_INTERVALS,
      minHealthyVenues: config.INDEX_MIN_VENUES,
      crossedBookMaxAgeMs: config.INDEX_CROSSED_BOOK_MAX_AGE_MS,
      includePerpetuals: config.INDEX_PERPETUALS,
      volumeWindowMinutes: config.INDEX_VOLUME_WINDOW_MIN,
      intervalWindowMinutes: config.INDEX_INTERVAL_WINDOW_MIN,
    }),
    schedule: indexScheduleSchema.parse({
      lagMs: config.INDEX_LAG_MS,
      recomputeSeconds: config.INDEX_RECOMPUTE_S,
      maxSecondsPerTick: config.INDEX_MAX_SECONDS_PER_TICK,
      backfillMs: config.INDEX_BACKFILL_HOURS === undefined ? undefined : config.INDEX_BACKFILL_HOURS * 3_600_000,
      constituentsEveryS: config.INDEX_CONSTITUENTS_EVERY_S,
    }),
  };
}

export interface IndexRunnerStats {
  /** The last second computed (unix s); undefined before the first step. */
  lastComputed: number | undefined;
  ranges: number;
  /** Rows written to index_ticks. */
  rows: number;
  failures: number;
  /** Go-backs for late trades: each computed seconds again from the first late one. */
  revisits: number;
  /** Time the ranges spent, by part (ms, summed): reading their inputs, the sweep, writing its rows. */
  phaseMs: Record<IndexPhase, number>;
  /** Live steps by input: how often they kept it from the steps before (LiveInputs), and how often read it again. */
  liveReads: LiveInputReads;
  /**
   * Live steps by their first second: continued from the last live sweep's state and verdicts
   * (only the assets whose inputs change computed), or every asset computed (after a start, a
   * go-back or a revisit).
   */
  liveSteps: { continued: number; everyAsset: number };
  /** Live steps that outlasted the rest of their second: the next second was due when they ended, and the next step began at once. */
  overruns: number;
}

/** The parts of computing a range, timed apart (mds_index_phase_seconds_total): where a slow index spends its seconds. */
export type IndexPhase = 'load' | 'sweep' | 'write';

/**
 * Seconds computed again for some assets' late trades (a venue's recovery lands them market after
 * market): a range of every asset would cost as much for one late market as for all of them.
 */
interface AssetRevisit {
  /**
   * The late assets, with the quote assets whose index values their markets (quoteIndexAssets),
   * and for a late quote asset, the assets it values.
   */
  assets: string[];
  /** The next second to compute again... */
  from: number;
  /**
   * ...up to this one: the last second computed. While catching up, as it was when the revisit
   * began (the live seconds wait for it); in the live loop, as the live seconds advance.
   */
  through: number;
  /** These assets' state at the end of `from - 1`; read from index_ticks for the first range. */
  prior: IndexState | undefined;
  /** Their rows of index_ticks in the seconds computed again: each is replaced (TickWrites, indexSweep.ts). */
  writes: { storedThrough: number; written: Map<string, string> };
}

/** `live` with the states of `assets` taken from `revisited` (an asset missing there has no price). */
function withRevisited(live: IndexState, revisited: IndexState, assets: readonly string[]): IndexState {
  const merged = new Map<string, PublishedIndex>(live);
  for (const asset of assets) merged.delete(asset);
  for (const [asset, state] of revisited) merged.set(asset, state);
  return merged;
}

export interface IndexRunnerOptions {
  store: Store;
  log: Logger;
  params: IndexParams;
  schedule: IndexSchedule;
  /** Clock, for tests and benchmarks that run simulated time. */
  now?: () => number;
  /** The live loop's wait between two steps (`start`): `ms`, or less once `signal` aborts. A test runs it on a simulated clock. */
  pause?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Whether the first step writes again the summaries of the 48 h the latest price reads (default
   * true): the runner before may have stopped between rows and their summaries. An import's runner,
   * which computes seconds of the past and sums up what it writes, says false.
   */
  resummarize?: boolean;
  /** Called after each step of the live loop (`start`) that did not fail (mds_index_step_seconds). */
  onStep?: (step: LoopStep) => void;
}

/** One step of the live loop, as its observer sees it. */
export interface LoopStep {
  /** Wall time of the whole step, ms: its live seconds, any revisit range, its writes. */
  ms: number;
  /** Whether it read the 24-hour windows again (after a start or a go-back, or for trades stored late in them): the steps that read most. */
  windowsRead: boolean;
}

const realPause = (ms: number, signal: AbortSignal): Promise<void> => sleep(ms, undefined, { signal }).catch(() => undefined);

/**
 * Computes the index second by second (see the module comment). `step` does one bounded unit of
 * work; `catchUp` steps until the index reaches now - lag; `start` runs it every second until stopped.
 */
export class IndexRunner {
  readonly #options: IndexRunnerOptions;
  readonly #stats: Omit<IndexRunnerStats, 'liveReads'> = { lastComputed: undefined, ranges: 0, rows: 0, failures: 0, revisits: 0, phaseMs: { load: 0, sweep: 0, write: 0 }, liveSteps: { continued: 0, everyAsset: 0 }, overruns: 0 };
  /**
   * What index_ticks holds as far as this runner knows (indexSweep.ts, TickWrites): seconds up to
   * storedThrough may hold rows of an earlier computation; written records the rows it wrote.
   */
  #writes: { storedThrough: number; written: Map<string, string> } | undefined;
  /** computed_at of the last rows written: strictly increasing, so the newest computation of a second wins even within one millisecond. */
  #computedAt = 0;
  /** The state at the end of the second the next live step starts after (SweepRange.keepAt). */
  #states = new Map<number, IndexState>();
  /** The last live sweep's verdicts: with a state of #states, what the next live step continues from (SweepArgs.verdicts). */
  #verdicts: IndexVerdicts | undefined;
  /** Set by catchUp({ from }) and by late trades: where the next step starts instead of the trailing window. */
  #nextFrom: number | undefined;
  /** While computing seconds again after going back: up to this second, index_ticks may hold rows this runner no longer knows. */
  #revisitThrough: number | undefined;
  /** The first second of trades of any asset stored since the last go-back (noteInserted without an asset). */
  #insertedFrom: number | undefined;
  /** Per asset, the first second of its trades stored late since the last go-back. */
  readonly #lateByAsset = new Map<string, number>();
  #assetRevisit: AssetRevisit | undefined;
  /** When the last go-back for late trades happened (the step's clock). */
  #wentBackAt = -Infinity;
  /** index_recompute_requests written after this (unix ms, wall clock) are still to be taken. */
  #requestsSince: number | undefined;
  /** When they were last read (the step's clock). */
  #requestsReadAt = -Infinity;
  #rates: { minute: number; rates: QuoteRates } | undefined;
  /** The verdicts of the last second computed, until written (constituentsEveryS), and the last second whose verdicts were written. */
  #constituents: { second: number; rows: ConstituentRow[] } | undefined;
  #constituentsWrittenFor = -Infinity;
  /** What the live steps of a minute share (LiveInputs): dropped when the runner goes back for every asset, or a join moved trades. */
  readonly #liveInputs = new LiveInputs();
  /** Buckets written into whose summaries are still to be written. */
  readonly #summaries = new IndexSummaryWrites();
  #loop: Promise<void> | undefined;
  #stopped = false;
  #wake: AbortController | undefined;

  constructor(options: IndexRunnerOptions) {
    this.#options = options;
  }

  stats(): IndexRunnerStats {
    return { ...this.#stats, phaseMs: { ...this.#stats.phaseMs }, liveSteps: { ...this.#stats.liveSteps }, liveReads: structuredClone(this.#liveInputs.reads) };
  }

  /** Runs `part` and adds its time to `phase`, whether it succeeds or not. */
  async #timed<T>(phase: IndexPhase, part: () => T | Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await part();
    } finally {
      this.#stats.phaseMs[phase] += performance.now() - started;
    }
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  /** FX and stablecoin rates at `at`, loaded once per minute: their own windows are an hour long. */
  async #quoteRates(at: number): Promise<QuoteRates> {
    const minute = Math.floor(at / 60_000);
    if (this.#rates?.minute !== minute) this.#rates = { minute, rates: await loadQuoteRates(this.#options.store, at) };
    return this.#rates.rates;
  }

  /** Resumes after the last second stored, or, on an empty store, at the first trade of the backfill window. */
  async #resume(now: number, target: number): Promise<void> {
    const { store, schedule } = this.#options;
    const stored = await loadStoredThrough(store);
    this.#computedAt = Math.max(this.#computedAt, stored?.computedAt ?? 0);
    // Requests written before the last rows this index computed were taken by the runner that wrote
    // them; with no index yet, every second will be computed anyway.
    this.#requestsSince ??= stored?.computedAt ?? Date.now();
    this.#writes ??= { storedThrough: stored?.latest ?? -1, written: new Map() };
    if (stored && this.#options.resummarize !== false) {
      const nowS = Math.floor(now / 1000);
      this.#summaries.note(nowS - latestPriceLookbackSeconds, Math.min(stored.latest, nowS));
    }
    this.#stats.lastComputed ??= stored?.latest ?? Math.min(target, (await loadNextTradeSecond(store, Math.floor((now - schedule.backfillMs) / 1000))) - 1);
  }

  /**
   * Trades of `asset` (of any asset when none is named) were stored with event times from
   * `minTsMs` on (the trade sink's `onInserted`). When they reach back before the seconds the next
   * step computes anyway (a venue's recovery, a backlog inserted after a store outage, a lagging
   * bus), those seconds are computed again from their first one, at most the backfill window back:
   * of the late assets alone, or of every asset.
   */
  noteInserted(minTsMs: number, asset?: string): void {
    const second = Math.floor(minTsMs / 1000);
    if (asset === undefined) this.#insertedFrom = Math.min(this.#insertedFrom ?? second, second);
    else this.#lateByAsset.set(asset, Math.min(this.#lateByAsset.get(asset) ?? second, second));
  }

  /**
   * Takes the requests to compute an asset again (index_recompute_requests: trades stored without
   * the sinks, as a join of a discovered asset moves them) as late trades of that asset. Read at
   * most once per `revisitEveryMs` unless `atOnce`.
   */
  async #takeRecomputeRequests(now: number, atOnce: boolean): Promise<void> {
    if (!atOnce && now - this.#requestsReadAt < this.#options.schedule.revisitEveryMs) return;
    this.#requestsReadAt = now;
    const requests = await loadIndexRecomputeRequests(this.#options.store, this.#requestsSince!);
    for (const r of requests) {
      this.noteInserted(r.fromMs, r.asset);
      this.#requestsSince = Math.max(this.#requestsSince!, r.requestedAt);
    }
    if (requests.length === 0) return;
    // Trades moved from one asset to another keep the store's counts: what the live steps kept is read again.
    this.#liveInputs.forget();
    this.#options.log.info({ assets: [...new Set(requests.map((r) => r.asset))] }, 'index recompute requested: computing those assets again');
  }

  /** The next steps compute again from `from`, replacing what index_ticks holds from there on. */
  #goBack(from: number): void {
    const last = this.#stats.lastComputed!;
    if (from > last) return;
    this.#revisitThrough = Math.max(this.#revisitThrough ?? last, last);
    this.#stats.lastComputed = from - 1;
    this.#nextFrom = from;
    this.#states = new Map();
    this.#liveInputs.forget();
  }

  /** Rows of index_ticks in these seconds that this runner did not write: a recomputation replaces each one. */
  async #noteStoredRows(from: number, to: number): Promise<void> {
    for (const row of await loadStoredSeconds(this.#options.store, from, to)) {
      const key = tickKey(row);
      if (!this.#writes!.written.has(key)) this.#writes!.written.set(key, '');
    }
  }

  /**
   * What a live range and an asset revisit's range share: load the inputs (of `assets`, or of every
   * asset when empty), sweep the seconds and insert their index_ticks rows, each part timed.
   */
  async #sweepRange(range: SweepRange, prior: IndexState, writes: TickWrites, assets: readonly string[] = [], verdicts?: IndexVerdicts): Promise<SweepResult> {
    const { store, params } = this.#options;
    const live = assets.length === 0 ? this.#liveInputs : undefined;
    const [inputs, rates] = await this.#timed('load', () => Promise.all([loadIndexInputs(store, range, params, assets, live), this.#quoteRates((range.to + 1) * 1000)]));
    this.#computedAt = Math.max(Date.now(), this.#computedAt + 1);
    const result = await this.#timed('sweep', () => sweepIndex({ range, inputs, prior, verdicts, params, rates, writes, computedAt: this.#computedAt }));
    await this.#timed('write', () => store.insert('index_ticks', result.rows));
    if (result.rows.length > 0) this.#summaries.note(range.from, range.to);
    return result;
  }

  /** Writes the verdicts held (index_constituents_latest), if not written yet. */
  async #writeConstituents(): Promise<void> {
    const held = this.#constituents;
    if (!held) return;
    await this.#timed('write', () => this.#options.store.insert('index_constituents_latest', held.rows));
    this.#constituentsWrittenFor = held.second;
    if (this.#constituents === held) this.#constituents = undefined;
  }

  /** Computes and writes the seconds of `range`; returns the assets that had a candidate market and the rows written. */
  async #computeRange(range: SweepRange, prior: IndexState, verdicts: IndexVerdicts | undefined): Promise<{ assets: number; rows: number }> {
    const { store } = this.#options;
    const writes = this.#writes!;
    const result = await this.#sweepRange(range, prior, writes, [], verdicts);
    // Recorded only once the insert succeeded: a failed step writes the same rows again.
    for (const [key, content] of result.written) writes.written.set(key, content);
    this.#constituents = { second: range.to, rows: result.constituents };
    for (const key of writes.written.keys()) if (Number(key.split('\u0000')[1]) < range.from) writes.written.delete(key);
    this.#states = result.states;
    this.#verdicts = result.verdicts;
    return { assets: result.assets, rows: result.rows.length };
  }

  /**
   * Goes back for trades stored after the index passed their seconds, unless the trailing window
   * covers them anyway; at most once per `revisitEveryMs` unless `atOnce` (catchUp): until then
   * they wait. Late trades of named assets: those assets alone, with the assets a late quote asset
   * values (#assetRevisit); of any asset (an unnamed backlog): every asset (#goBack).
   */
  async #revisitLateTrades(now: number, atOnce: boolean): Promise<void> {
    const { schedule, log } = this.#options;
    const last = this.#stats.lastComputed!;
    const horizon = Math.floor((now - schedule.backfillMs) / 1000);
    // The next step computes every asset from this second on anyway.
    const covered = this.#nextFrom ?? last + 1 - schedule.recomputeSeconds;
    const isCovered = (second: number) => Math.max(second, horizon) >= covered;
    if (this.#insertedFrom !== undefined && isCovered(this.#insertedFrom)) this.#insertedFrom = undefined;
    for (const [asset, second] of this.#lateByAsset) if (isCovered(second)) this.#lateByAsset.delete(asset);
    // Trades that came late while a revisit runs wait for it to end; those the live steps cover meanwhile are dropped above.
    if (this.#assetRevisit || (this.#insertedFrom === undefined && this.#lateByAsset.size === 0)) return;
    if (!atOnce && now - this.#wentBackAt < schedule.revisitEveryMs) return;
    let first = this.#insertedFrom ?? Infinity;
    for (const second of this.#lateByAsset.values()) first = Math.min(first, second);
    first = Math.max(first, horizon);
    const everyAsset = this.#insertedFrom !== undefined;
    const valuedByLate = quoteIndexAssets.filter((asset) => this.#lateByAsset.has(asset)).flatMap(quotesValuedBy);
    const assets = everyAsset ? [] : [...new Set([...quoteIndexAssets, ...this.#lateByAsset.keys(), ...(await loadAssetsQuotedIn(this.#options.store, valuedByLate, first, this.#options.params))])];
    this.#insertedFrom = undefined;
    this.#lateByAsset.clear();
    this.#wentBackAt = now;
    this.#stats.revisits += 1;
    log.warn({ from: first, seconds: last - first + 1, assets: everyAsset ? 'all' : assets.length }, 'trades stored after the index passed their seconds: computing those seconds again');
    if (everyAsset) this.#goBack(first);
    else this.#assetRevisit = { assets, from: first, through: last, prior: undefined, writes: { storedThrough: -1, written: new Map() } };
  }

  /**
   * Computes one range of an asset revisit and writes its rows. Returns true once it has reached
   * its last second: the live state of its assets is then the recomputed one.
   */
  async #revisitAssets(revisit: AssetRevisit, maxSeconds: number): Promise<boolean> {
    const { store, params, schedule } = this.#options;
    // The last range spans the trailing window at least: the next live step starts from its states.
    const done = revisit.through - revisit.from + 1 <= maxSeconds + schedule.recomputeSeconds;
    const to = done ? revisit.through : revisit.from + maxSeconds - 1;
    const range: SweepRange = { from: revisit.from, to, keepAt: done ? to - schedule.recomputeSeconds : to };
    for (const row of await loadStoredSeconds(store, range.from, to, revisit.assets)) revisit.writes.written.set(tickKey(row), '');
    const prior = revisit.prior ?? (await loadIndexState(store, range.from - 1, params, revisit.assets));
    const result = await this.#sweepRange(range, prior, revisit.writes, revisit.assets);
    this.#stats.ranges += 1;
    this.#stats.rows += result.rows.length;
    if (!done) {
      revisit.from = to + 1;
      revisit.prior = result.states.get(to);
      revisit.writes.written.clear();
      return false;
    }
    this.#assetRevisit = undefined;
    // The live verdicts of the revisited assets are older than their state now: the next live step computes every asset.
    this.#verdicts = undefined;
    for (const [second, state] of result.states) {
      const live = this.#states.get(second);
      if (live) this.#states.set(second, withRevisited(live, state, revisit.assets));
    }
    for (const [key, content] of result.written) this.#writes!.written.set(key, content);
    return true;
  }

  /** One bounded unit of work. Returns true while the index is behind now - lag. `revisitAtOnce`: late trades go back now, not at the next interval. */
  async step(now = this.#now(), revisitAtOnce = false): Promise<boolean> {
    const behind = await this.#computeStep(now, revisitAtOnce);
    // The verdicts once the step's seconds count as computed: their insert (a row per candidate
    // market) is no part of the lag, and their readers look 60 s back.
    const held = this.#constituents;
    if (held && held.second - this.#constituentsWrittenFor >= this.#options.schedule.constituentsEveryS) await this.#writeConstituents();
    await this.#writeSummaries(this.#stats.lastComputed! + 1 - this.#options.schedule.recomputeSeconds);
    return behind;
  }

  /**
   * Writes the summaries of the buckets written into that end by `closedBefore` (unix s) and before
   * the seconds a live runner still computes again (its trailing window, by the wall clock): an
   * import's runner leaves those to it.
   */
  async #writeSummaries(closedBefore: number): Promise<void> {
    const { store, schedule } = this.#options;
    await this.#timed('write', () => this.#summaries.write(store, Math.min(closedBefore, liveRecomputedFrom(this.#now(), schedule))));
  }

  async #computeStep(now: number, revisitAtOnce: boolean): Promise<boolean> {
    const { schedule } = this.#options;
    const target = lastDueSecond(now, schedule);
    if (this.#stats.lastComputed === undefined || !this.#writes) await this.#resume(now, target);
    await this.#takeRecomputeRequests(now, revisitAtOnce);
    await this.#revisitLateTrades(now, revisitAtOnce);
    const revisit = this.#assetRevisit;
    if (!revisit) return this.#liveStep(target);
    if (this.#isLive(target)) {
      // The live seconds first, then one range of the revisit, which chases them: the revisit
      // never holds the live seconds back by more than one of its ranges.
      const behind = await this.#liveStep(target);
      revisit.through = this.#stats.lastComputed!;
      return !(await this.#revisitAssets(revisit, schedule.revisitSecondsPerStep)) || behind;
    }
    if (!(await this.#revisitAssets(revisit, schedule.maxSecondsPerTick))) return true;
    return this.#liveStep(target);
  }

  /**
   * Whether the next live range is short (fewer seconds than recomputeSeconds): the live loop, not
   * a catch-up. A revisit then goes after the live seconds. Its assets' live rows come from their
   * old state until it ends at the last second computed; the next live step computes them again
   * from the revisited state.
   */
  #isLive(target: number): boolean {
    return this.#nextFrom === undefined && target - this.#stats.lastComputed! < this.#options.schedule.recomputeSeconds;
  }

  /** Computes the seconds from the trailing window (or from a go-back) up to `target`, at most maxSecondsPerTick of them. Returns true while behind `target`. */
  async #liveStep(target: number): Promise<boolean> {
    const { store, params, schedule, log } = this.#options;
    const last = this.#stats.lastComputed!;
    if (target <= last) return false;
    const from = this.#nextFrom ?? last + 1 - schedule.recomputeSeconds;
    const to = Math.min(target, last + schedule.maxSecondsPerTick);
    if (this.#revisitThrough !== undefined && from <= this.#revisitThrough) await this.#noteStoredRows(from, Math.min(to, this.#revisitThrough));
    // The state the last live sweep kept continues with its verdicts; one read from the store does not.
    const kept = this.#states.get(from - 1);
    const prior = kept ?? (await loadIndexState(store, from - 1, params));
    const verdicts = kept && this.#verdicts;
    const result = await this.#computeRange({ from, to, keepAt: to - schedule.recomputeSeconds }, prior, verdicts);
    this.#stats.liveSteps[verdicts ? 'continued' : 'everyAsset'] += 1;
    this.#nextFrom = undefined;
    if (this.#revisitThrough !== undefined && to >= this.#revisitThrough) this.#revisitThrough = undefined;
    this.#stats.ranges += 1;
    this.#stats.rows += result.rows;
    this.#stats.lastComputed = to;
    if (result.assets === 0 && to < target) {
      // No market traded within the volume window of this range: jump to the next trade instead of walking empty seconds.
      const next = await loadNextTradeSecond(store, to + 1);
      this.#stats.lastComputed = Math.max(to, Math.min(target, next - 1));
    }
    log.debug({ from, to, rows: result.rows, assets: result.assets }, 'index computed');
    return this.#stats.lastComputed < target;
  }

  /**
   * Steps until the index has reached `now` - lag. With `from` (unix s), computes again from that
   * second instead of resuming: after a change of parameters, or in tests that store trades first.
   */
  async catchUp(now = this.#now(), options: { from?: number } = {}): Promise<void> {
    if (options.from !== undefined) {
      await this.#resume(now, lastDueSecond(now, this.#options.schedule));
      this.#goBack(options.from);
      // Also when `from` is ahead of what is computed: start there.
      this.#stats.lastComputed = options.from - 1;
      this.#nextFrom = options.from;
    }
    while (await this.step(now, true));
    await this.#writeConstituents();
    // Caught up, the trailing window too is computed.
    await this.#writeSummaries(this.#stats.lastComputed! + 1);
  }

  /**
   * Whether a second after `last` ended lagMs ago by now. A step that outlasts the rest of its
   * second finds the next one due when it ends: waiting for the next whole second then would add up
   * to a second to the lag, in the steps that already made it longest.
   */
  #dueAfter(last: number | undefined): boolean {
    return last !== undefined && lastDueSecond(this.#now(), this.#options.schedule) > last;
  }

  /** `step`, timed for `onStep`. */
  async #observedStep(): Promise<boolean> {
    const started = performance.now();
    const windowsReadBefore = this.#liveInputs.reads.windows.read;
    const behind = await this.step();
    this.#options.onStep?.({ ms: performance.now() - started, windowsRead: this.#liveInputs.reads.windows.read > windowsReadBefore });
    return behind;
  }

  /** Runs every second (back to back while catching up, or after a step longer than its second) until `stop`. */
  start(): void {
    this.#loop ??= (async () => {
      const { log } = this.#options;
      log.info('index runner started');
      while (!this.#stopped) {
        let behind = false;
        let failed = false;
        try {
          behind = await this.#observedStep();
        } catch (err) {
          failed = true;
          this.#stats.failures += 1;
          log.error({ err }, 'index computation failed; retrying');
        }
        if (behind || this.#stopped) continue;
        // Not after a failure: a store that fails at once would be asked again and again, holding the thread.
        if (!failed && this.#dueAfter(this.#stats.lastComputed)) {
          this.#stats.overruns += 1;
          // One turn of the event loop first, whatever the step awaited: the thread's other work goes on.
          await setImmediate();
          continue;
        }
        this.#wake = new AbortController();
        await (this.#options.pause ?? realPause)(1_000 - (this.#now() % 1_000), this.#wake.signal);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.abort();
    await this.#loop;
    await this.#writeConstituents().catch((err: unknown) => this.#options.log.warn({ err }, 'the last index verdicts were not written (index_constituents_latest)'));
  }
}

export function startIndexRunner(options: IndexRunnerOptions): IndexRunner {
  const runner = new IndexRunner(options);
  runner.start();
  return runner;
}

// The index history (index_ticks) of an imported span, computed by the index runner's own code
// (aggregate/indexRunner.ts) over those seconds only: a runner of its own resumes from what
// index_ticks holds, goes back to the span's first second and steps to its end. Trades weigh in
// the index for its volume window after them (24 h by default), so the span runs that far past the
// last imported trade, but never into the seconds the live runner of a running node computes
// (its lag and trailing window): those it is told to compute again (`noteInserted`).
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import type { IndexParams } from '../aggregate/indexPrice.ts';
import { IndexRunner, liveRecomputedFrom, type IndexSchedule } from '../aggregate/indexRunner.ts';
import type { Span } from './importFiles.ts';

export interface IndexSettings {
  params: IndexParams;
  schedule: IndexSchedule;
}

/** What was computed: seconds `from`..`to` (unix s); `liveFrom`, when set, is the first second left to the live runner. */
export interface IndexSpanOutcome {
  from: number;
  to: number;
  rows: number;
  tookMs: number;
  liveFrom?: number;
}

/** Largest step: a day of one busy market's seconds is loaded at once, well within memory. */
const secondsPerStep = 6 * 3_600;

/** The seconds to compute for trades stored in `span` (unix ms), as of `now`. */
export function indexSecondsOf(span: Span, { params, schedule }: IndexSettings, now: number): { from: number; to: number; liveFrom?: number } {
  const from = Math.floor(span.from / 1000);
  const wanted = Math.floor(span.to / 1000) + params.volumeWindowMinutes * 60;
  // The live runner recomputes its trailing window every second; everything before is ours.
  const liveFrom = liveRecomputedFrom(now, schedule);
  return wanted < liveFrom ? { from, to: wanted } : { from, to: Math.max(from, liveFrom - 1), liveFrom };
}

export async function computeIndexSpan(store: Store, settings: IndexSettings, span: Span, log: Logger, now = Date.now()): Promise<IndexSpanOutcome> {
  const started = performance.now();
  const { from, to, liveFrom } = indexSecondsOf(span, settings, now);
  const schedule = { ...settings.schedule, maxSecondsPerTick: Math.max(settings.schedule.maxSecondsPerTick, secondsPerStep) };
  const runner = new IndexRunner({ store, log, params: settings.params, schedule, resummarize: false });
  // catchUp computes up to its `now` less the lag: this `now` ends the steps at `to`.
  await runner.catchUp((to + 1) * 1000 + schedule.lagMs, { from });
  return { from, to, rows: runner.stats().rows, tookMs: Math.round(performance.now() - started), ...(liveFrom === undefined ? {} : { liveFrom }) };
}

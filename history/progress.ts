// What `npm run import` shows on stderr while it runs: on a terminal a bar redrawn in place, else a
// plain line every few seconds; and the summary at the end, on stdout. Formatting is pure; the
// reporter only decides when to write.
import type { FileOutcome } from './importFile.ts';
import type { FailedFile, RunSummary } from './importRun.ts';
import { refusedTotal, type RowCounts } from './importFiles.ts';

const count = (n: number) => n.toLocaleString('en-US');

/** `[########----------]  42%` */
export function bar(fraction: number, width = 24): string {
  const done = Math.max(0, Math.min(width, Math.round(fraction * width)));
  return `[${'#'.repeat(done)}${'-'.repeat(width - done)}] ${String(Math.floor(Math.max(0, Math.min(1, fraction)) * 100)).padStart(3)}%`;
}

export interface ProgressState {
  file: string;
  position: number;
  of: number;
  fraction: number;
  rows: number;
  rowsPerSecond: number;
}

export function progressLine(s: ProgressState): string {
  return `${bar(s.fraction)} file ${s.position}/${s.of} ${s.file}  ${count(s.rows)} rows  ${count(Math.round(s.rowsPerSecond))} rows/s`;
}

/** Rows by outcome, and refused ones by reason, largest first. */
export function countsLines(c: RowCounts): string[] {
  const lines = [`rows read ${count(c.read)}: new ${count(c.new)}, already held ${count(c.held)}, refused ${count(refusedTotal(c))}`];
  for (const [reason, n] of [...c.refused].sort((a, b) => b[1] - a[1])) lines.push(`  refused ${count(n)}: ${reason}`);
  return lines;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function summaryLines(s: RunSummary, target: string): string[] {
  const imported = s.files.filter((f) => f.state === 'imported').length;
  const skipped = s.files.length - imported;
  const lines = [`import into ${target}: ${s.files.length + s.failed.length} file(s): ${imported} read, ${skipped} already imported (by sha256; --force reads them again), ${s.failed.length} failed`];
  lines.push(...countsLines(s.counts));
  const rate = s.counts.read > 0 ? `, ${count(Math.round(s.counts.read / (s.tookMs / 1000)))} rows/s overall` : '';
  lines.push(`took ${seconds(s.tookMs)}${rate}`);
  for (const i of s.index)
    lines.push(`index history computed for ${new Date(i.from * 1000).toISOString()} .. ${new Date((i.to + 1) * 1000).toISOString()} (${count(i.to - i.from + 1)} s, ${count(i.rows)} rows) in ${seconds(i.tookMs)}${i.liveFrom === undefined ? '' : '; the live index runner computes the seconds after'}`);
  for (const f of s.failed) lines.push(`FAILED ${f.name}: ${f.error}`);
  return lines;
}

export const fileLine = (o: FileOutcome | FailedFile) =>
  'error' in o ? `failed ${o.name}: ${o.error}` : o.state === 'already imported' ? `skipped ${o.name}: already imported` : `done ${o.name}: ${countsLines(o.counts)[0]}`;

/** Writes progress to a stream: a bar in place on a terminal, a line every `everyMs` otherwise. */
export class ProgressReporter {
  readonly #out: NodeJS.WriteStream;
  readonly #tty: boolean;
  readonly #everyMs: number;
  #state: ProgressState | undefined;
  #fileStartedAt = 0;
  #lastWrite = 0;

  constructor(out: NodeJS.WriteStream, options: { tty?: boolean; everyMs?: number } = {}) {
    this.#out = out;
    this.#tty = options.tty ?? out.isTTY === true;
    this.#everyMs = options.everyMs ?? (this.#tty ? 100 : 5_000);
  }

  fileStarted(file: string, position: number, of: number): void {
    this.#fileStartedAt = performance.now();
    this.#state = { file, position, of, fraction: 0, rows: 0, rowsPerSecond: 0 };
  }

  update(fraction: number, rows: number): void {
    if (!this.#state) return;
    const elapsed = (performance.now() - this.#fileStartedAt) / 1000;
    this.#state = { ...this.#state, fraction, rows, rowsPerSecond: elapsed > 0 ? rows / elapsed : 0 };
    const now = performance.now();
    if (now - this.#lastWrite < this.#everyMs) return;
    this.#lastWrite = now;
    const line = progressLine(this.#state);
    this.#out.write(this.#tty ? `\r\x1b[2K${line}` : `${line}\n`);
  }

  /** A line of its own (a file done, a step begun), clearing the bar first. */
  say(line: string): void {
    this.#out.write(this.#tty ? `\r\x1b[2K${line}\n` : `${line}\n`);
  }
}

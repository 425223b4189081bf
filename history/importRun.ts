// One `npm run import`: its files one after the other, then the index history of everything they
// stored (and of files an earlier run stored without getting that far), then each file marked
// complete. What is refused is counted per reason; a file that fails stops nothing but itself.
import { FileImport, type FileJob, type FileOutcome, type ImportSettings } from './importFile.ts';
import { addRows, loadInsertedFiles, noRows, saveImportFiles, type ImportFileRecord, type RowCounts, type Span } from './importFiles.ts';
import type { IndexSpanOutcome } from './indexSpan.ts';

export interface FailedFile {
  name: string;
  error: string;
}

export interface RunSummary {
  files: FileOutcome[];
  failed: FailedFile[];
  counts: RowCounts;
  /** The index history computed, one span per group of files whose trades lie within a day of each other. */
  index: IndexSpanOutcome[];
  tookMs: number;
}

export interface RunHooks {
  onFileStart?(job: FileJob, position: number, of: number): void;
  onFileDone?(outcome: FileOutcome | FailedFile): void;
  onIndexStart?(span: Span): void;
}

/**
 * The stored spans, merged where less than `gapMs` apart: the index is computed over each group, not
 * over the months between two files (which may hold live trades whose index needs no recomputing).
 */
export function spanGroups(spans: readonly Span[], gapMs: number): Span[] {
  const groups: Span[] = [];
  for (const span of [...spans].sort((a, b) => a.from - b.from)) {
    const last = groups.at(-1);
    if (last && span.from <= last.to + gapMs) last.to = Math.max(last.to, span.to);
    else groups.push({ ...span });
  }
  return groups;
}

const dayMs = 86_400_000;

export async function importFiles(jobs: readonly FileJob[], settings: ImportSettings, hooks: RunHooks = {}): Promise<RunSummary> {
  const started = performance.now();
  const files: FileOutcome[] = [];
  const failed: FailedFile[] = [];
  const counts = noRows();
  for (const [i, job] of jobs.entries()) {
    hooks.onFileStart?.(job, i + 1, jobs.length);
    try {
      const outcome = await new FileImport(job, settings).run();
      files.push(outcome);
      addRows(counts, outcome.counts);
      hooks.onFileDone?.(outcome);
    } catch (err) {
      const failure = { name: job.name, error: (err as Error).message };
      failed.push(failure);
      hooks.onFileDone?.(failure);
    }
  }
  // Every file whose trades are stored and whose index is not computed: this run's, and any an earlier run left.
  const pending: ImportFileRecord[] = await loadInsertedFiles(settings.target);
  const index: IndexSpanOutcome[] = [];
  const indexFrom = settings.indexFrom ?? -Infinity;
  const clipped = pending.flatMap((r) => (r.stored && r.stored.to >= indexFrom ? [{ from: Math.max(r.stored.from, indexFrom), to: r.stored.to }] : []));
  for (const span of spanGroups(clipped, dayMs)) {
    hooks.onIndexStart?.(span);
    index.push(await settings.target.computeIndex(span));
  }
  await saveImportFiles(settings.target, pending.map((record) => ({ ...record, state: 'complete' as const })));
  return { files, failed, counts, index, tookMs: Math.round(performance.now() - started) };
}

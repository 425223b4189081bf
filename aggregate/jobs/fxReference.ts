import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { Job } from '../../infra/jobs.ts';
import type { Store } from '../../infra/store.ts';

/**
 * Reference FX rates from an ECB-style daily CSV (aggregate/METHODOLOGY.md, "FX and currencies").
 *
 * The format is the ECB's historical file (eurofxref-hist.csv): a header `Date,USD,JPY,...`, then
 * one row per day of units of each currency per 1 EUR, `N/A` (or empty) where a currency has no
 * rate that day, lines possibly ending with a comma. Extra columns for currencies the ECB does not
 * publish (ARS, TWD, ...) follow the same rule. Lines starting with `#` are comments; two of them
 * name the publisher: `# source: ecb` for the whole file, `# source ARS CLP: bcra` for columns.
 */

/** Approximate rates for the demo, marked as such in the file and in its source (demo-snapshot). */
export const fxDemoSnapshotFile = fileURLToPath(new URL('../../infra/reference/fx-demo-snapshot.csv', import.meta.url));

/** Stops reading after this many problems: the first ones are what a person fixes first. */
const maxProblems = 20;

/** A file that does not follow the format; `problems` name their line numbers (1-based). */
export class FxReferenceFileError extends Error {
  override name = 'FxReferenceFileError';
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[]) {
    super(`${file}: not a valid ECB-style FX file:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

/** One rate as stored: units of `currency` (lower-case ISO 4217) per 1 USD on `date`. */
export interface FxReferenceRate {
  date: string;
  currency: string;
  perUsd: number;
  source: string;
}

const currencyColumn = z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter upper-case ISO 4217 code');
const sourceName = z.string().regex(/^[a-z0-9][a-z0-9._:-]{0,63}$/, 'must be a lower-case name (a-z, 0-9, . _ : -), at most 64 characters');
const dateCell = z.iso.date({ error: 'must be a calendar date YYYY-MM-DD' });
/** Units per EUR: a plain positive decimal, or N/A / empty for no rate that day. */
const rateCell = z.string().transform((cell, ctx) => {
  if (cell === 'N/A' || cell === '') return null;
  const value = Number(cell);
  if (/^\d+(\.\d+)?$/.test(cell) && value > 0 && Number.isFinite(value)) return value;
  ctx.addIssue({ code: 'custom', message: 'is not a rate: expected a positive decimal number, N/A or nothing' });
  return z.NEVER;
});

const sourceDirective = /^#\s*source(?:\s+([A-Z]{3}(?:[\s,]+[A-Z]{3})*))?\s*:\s*(.*?)\s*$/;

function message(error: z.ZodError): string {
  return error.issues[0]?.message ?? 'invalid';
}

/**
 * Parses and validates a whole file into per-USD rates. Every problem found (up to 20) is reported
 * at once, each with its line number; nothing is returned from a file with any problem, so a
 * half-broken file never replaces good rates. `fileName` names the default source.
 */
export function parseFxReferenceCsv(text: string, fileName: string): FxReferenceRate[] {
  const problems: string[] = [];
  const problem = (line: number, what: string) => {
    if (problems.length < maxProblems) problems.push(`line ${line}: ${what}`);
  };
  let fileSource = `file:${fileName}`;
  const columnSource = new Map<string, { name: string; line: number }>();
  let columns: string[] | undefined;
  let trailingComma = false;
  const days: { date: string; cells: (number | null)[] }[] = [];
  const dateLine = new Map<string, number>();

  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const content = raw.trim();
    if (content === '') return;
    if (content.startsWith('#')) {
      const directive = sourceDirective.exec(content);
      if (!directive) return;
      const name = sourceName.safeParse(directive[2]);
      if (!name.success) return problem(line, `source ${JSON.stringify(directive[2])} ${message(name.error)}`);
      if (directive[1] === undefined) fileSource = name.data;
      else for (const code of directive[1].split(/[\s,]+/)) columnSource.set(code, { name: name.data, line });
      return;
    }
    if (content.includes('"')) return problem(line, 'quoted fields are not part of the format');
    const fields = content.split(',').map((f) => f.trim());

    if (columns === undefined) {
      // The ECB ends every line with a comma: one empty last field, in the header and in each row.
      trailingComma = fields.at(-1) === '';
      const names = trailingComma ? fields.slice(0, -1) : fields;
      if (names[0] !== 'Date') problem(line, `the header must start with Date, found ${JSON.stringify(names[0])}`);
      columns = names.slice(1);
      const seen = new Set<string>();
      for (const name of columns) {
        const code = currencyColumn.safeParse(name);
        if (!code.success) problem(line, `column ${JSON.stringify(name)} ${message(code.error)}`);
        else if (name === 'EUR') problem(line, 'column EUR: rates are units per EUR, so EUR cannot be a column');
        else if (seen.has(name)) problem(line, `column ${name} appears twice`);
        seen.add(name);
      }
      if (!seen.has('USD')) problem(line, 'the header has no USD column, which converts every rate to per-USD');
      return;
    }

    const cells = trailingComma && fields.at(-1) === '' ? fields.slice(0, -1) : fields;
    if (cells.length !== columns.length + 1) {
      return problem(line, `${cells.length} fields where the header has ${columns.length + 1}`);
    }
    const date = dateCell.safeParse(cells[0]);
    if (!date.success) return problem(line, `Date ${JSON.stringify(cells[0])} ${message(date.error)}`);
    const earlier = dateLine.get(date.data);
    if (earlier !== undefined) return problem(line, `date ${date.data} already given on line ${earlier}`);
    dateLine.set(date.data, line);
    const values = columns.map((column, i) => {
      const value = rateCell.safeParse(cells[i + 1]);
      if (value.success) return value.data;
      problem(line, `column ${column}: ${JSON.stringify(cells[i + 1])} ${message(value.error)}`);
      return null;
    });
    const usdCell = cells[columns.indexOf('USD') + 1];
    if (columns.includes('USD') && (usdCell === 'N/A' || usdCell === '')) problem(line, 'USD has no rate: the row cannot be converted to per-USD');
    days.push({ date: date.data, cells: values });
  });

  if (columns === undefined) problem(lines.length, 'no header line (Date,USD,...) was found');
  for (const [code, { line }] of columnSource) {
    if (columns && !columns.includes(code)) problem(line, `a source is named for column ${code}, which the header does not have`);
  }
  if (problems.length > 0) throw new FxReferenceFileError(fileName, problems);

  const header = columns!;
  // EUR's rate is the inverse of the USD column, so it comes from whoever published that column.
  const sourceOf = (column: string) => columnSource.get(column)?.name ?? fileSource;
  const usdIndex = header.indexOf('USD');
  const rates: FxReferenceRate[] = [];
  for (const day of days) {
    const usdPerEur = day.cells[usdIndex]!;
    rates.push({ date: day.date, currency: 'eur', perUsd: 1 / usdPerEur, source: sourceOf('USD') });
    header.forEach((column, i) => {
      const perEur = day.cells[i];
      if (column === 'USD' || perEur === null || perEur === undefined) return;
      rates.push({ date: day.date, currency: column.toLowerCase(), perUsd: perEur / usdPerEur, source: sourceOf(column) });
    });
  }
  return rates;
}

export interface FxImportResult {
  /** Rates in the file. */
  rates: number;
  /** Rates written: new (currency, date) pairs, or a changed value or source. */
  inserted: number;
  unchanged: number;
}

const key = (r: Pick<FxReferenceRate, 'currency' | 'date'>) => `${r.currency}\u0000${r.date}`;

/**
 * Writes the rates the table does not already hold as they are. Importing the same file again
 * writes nothing; a corrected day is written again and wins (ReplacingMergeTree on imported_at).
 */
export async function importFxReference(store: Store, rates: readonly FxReferenceRate[], now: number): Promise<FxImportResult> {
  if (rates.length === 0) return { rates: 0, inserted: 0, unchanged: 0 };
  let from = rates[0]!.date;
  let to = from;
  for (const r of rates) {
    if (r.date < from) from = r.date;
    if (r.date > to) to = r.date;
  }
  // `day`, not `date`: an alias named like the column would replace it in WHERE.
  const held = await store.rows<Omit<FxReferenceRate, 'date'> & { day: string }>(
    `SELECT toString(date) AS day, currency, per_usd AS perUsd, source
     FROM fx_reference_rates FINAL
     WHERE date BETWEEN toDate({from:String}) AND toDate({to:String})`,
    { from, to },
  );
  const heldByKey = new Map(held.map((r) => [key({ currency: r.currency, date: r.day }), r]));
  const changed = rates.filter((r) => {
    const h = heldByKey.get(key(r));
    return !h || h.perUsd !== r.perUsd || h.source !== r.source;
  });
  await store.insert(
    'fx_reference_rates',
    changed.map((r) => ({ date: r.date, currency: r.currency, per_usd: r.perUsd, source: r.source, imported_at: now })),
  );
  return { rates: rates.length, inserted: changed.length, unchanged: rates.length - changed.length };
}

/** Reads, validates and imports one file; a file with any problem imports nothing. */
export async function importFxReferenceFile(store: Store, path: string, now: number): Promise<FxImportResult> {
  const rates = parseFxReferenceCsv(await readFile(path, 'utf8'), basename(path));
  return importFxReference(store, rates, now);
}

/** Imports FX_REFERENCE_FILE once a day (and at start); the ECB publishes once per working day. */
export function fxReferenceJob(path: string): Job {
  return {
    name: 'fx-reference-import',
    everyMs: 24 * 60 * 60_000,
    async run({ store, log }) {
      const result = await importFxReferenceFile(store, path, Date.now());
      log.info({ file: path, ...result }, 'reference FX rates imported');
    },
  };
}

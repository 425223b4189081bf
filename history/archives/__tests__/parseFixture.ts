// Reads a recorded fixture beside the tests line by line through a format, as the importer does
// (header lines give the columns), for the unit tests of each archive source.
import { readFileSync } from 'node:fs';
import { isRefusal, type ArchiveFormat, type ArchiveTrade, type ParsedRow } from '../format.ts';

export const fixturePath = (path: string) => new URL(`./fixtures/${path}`, import.meta.url);

/** The fixture's data lines (not its header) as text, split on commas: the oracle the tests compare with. */
export function fixtureCells(path: string, hasHeader: boolean): string[][] {
  const lines = readFileSync(fixturePath(path), 'utf8').split('\n').filter((l) => l !== '');
  return (hasHeader ? lines.slice(1) : lines).map((l) => l.split(','));
}

/** Every data line of the fixture through `format`. */
export function parseFixture(format: ArchiveFormat, path: string, market: string, period: string): ParsedRow[] {
  const context: { market: string; lineNumber: number; period: string; columns?: readonly string[] } = { market, lineNumber: 0, period };
  const rows: ParsedRow[] = [];
  for (const line of readFileSync(fixturePath(path), 'utf8').split('\n')) {
    context.lineNumber += 1;
    if (line === '') continue;
    const columns = format.header(line);
    if (columns) context.columns = columns;
    else rows.push(format.parse(line, context));
  }
  return rows;
}

/** The trades among parsed rows (not the refusals). */
export const tradesOf = (rows: readonly ParsedRow[]) => rows.filter((r): r is ArchiveTrade => r !== undefined && !isRefusal(r));

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { expect, onTestFinished, test } from 'vitest';
import { ArchiveFileError, fileSha256, lineBatches } from '../archiveFile.ts';

const fixture = (path: string) => fileURLToPath(new URL(`../archives/__tests__/fixtures/${path}`, import.meta.url));

async function linesOf(path: string): Promise<{ lines: string[]; fractions: number[] }> {
  const lines: string[] = [];
  const fractions: number[] = [];
  for await (const batch of lineBatches(path)) {
    lines.push(...batch.lines);
    fractions.push(batch.fraction);
  }
  return { lines, fractions };
}

test('a zip as Binance makes it: its CSV is read, the __MACOSX resource fork beside it skipped', async () => {
  const { lines, fractions } = await linesOf(fixture('binance/2022-04-21_aggregate_trade_updates.zip'));
  expect(lines).toHaveLength(361);
  expect(lines[0]).toBe('File Path,Original File Checksum,New File Checksum');
  expect(lines.at(-1)).toMatch(/ZILBTC-aggTrades-2022-03\.zip$/);
  expect(lines.every((l) => !l.includes('\r'))).toBe(true);
  expect(fractions.at(-1)).toBeCloseTo(1, 5);
});

test('.csv.gz and .csv give the same lines, CRLF or not, with or without a last line break', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mds-archive-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const text = 'a,b\r\n1,2\r\n3,4';
  writeFileSync(join(dir, 'x.csv'), text);
  writeFileSync(join(dir, 'x.csv.gz'), gzipSync(`${text}\n`));
  expect((await linesOf(join(dir, 'x.csv'))).lines).toEqual(['a,b', '1,2', '3,4']);
  expect((await linesOf(join(dir, 'x.csv.gz'))).lines).toEqual(['a,b', '1,2', '3,4']);
  // sha256sum of the same bytes.
  expect(await fileSha256(join(dir, 'x.csv'))).toBe('6fb335da6da1ebbdb1c119195bf1c94c08ea4e32ae09120b1677e95d565d0f2b');
  writeFileSync(join(dir, 'broken.zip'), 'not a zip');
  await expect(linesOf(join(dir, 'broken.zip'))).rejects.toBeInstanceOf(ArchiveFileError);
  writeFileSync(join(dir, 'broken.csv.gz'), 'not gzip');
  await expect(linesOf(join(dir, 'broken.csv.gz'))).rejects.toBeInstanceOf(ArchiveFileError);
});

import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { binanceArchive } from '../archives/binance.ts';
import { bybitLinearArchive } from '../archives/bybit.ts';
import { gateArchive } from '../archives/gate.ts';
import { archiveBaseUrl, checksumOf, plannedPeriods } from '../download.ts';
import { spanGroups } from '../importRun.ts';
import { bar, countsLines, ProgressReporter } from '../progress.ts';

test('a whole month as its monthly file where the venue has them, the other days daily; months only where it has no daily files', () => {
  expect(plannedPeriods(binanceArchive, '2024-01-01', '2024-01-31')).toEqual([{ monthly: '2024-01' }]);
  expect(plannedPeriods(binanceArchive, '2024-01-30', '2024-03-01')).toEqual([{ daily: '2024-01-30' }, { daily: '2024-01-31' }, { monthly: '2024-02' }, { daily: '2024-03-01' }]);
  expect(plannedPeriods(bybitLinearArchive, '2024-01-01', '2024-01-02')).toEqual([{ daily: '2024-01-01' }, { daily: '2024-01-02' }]);
  expect(plannedPeriods(bybitLinearArchive, '2024-02-01', '2024-02-29')).toHaveLength(29);
  expect(plannedPeriods(gateArchive, '2024-01-15', '2024-02-02')).toEqual([{ monthly: '2024-01' }, { monthly: '2024-02' }]);
});

test('the .CHECKSUM line as Binance writes it (recorded, no final newline), and the host override', () => {
  const recorded = readFileSync(new URL('../archives/__tests__/fixtures/binance/BTCUSDT-aggTrades-2017-08-17.zip.CHECKSUM', import.meta.url), 'utf8');
  expect(checksumOf(recorded)).toBe('4790d51a88d6a73b492c24f08acc2f04d4112e20cbad823cd6b648cc85c18dd7');
  expect(checksumOf(`${recorded}\n`)).toBe('4790d51a88d6a73b492c24f08acc2f04d4112e20cbad823cd6b648cc85c18dd7');
  expect(checksumOf('not a checksum')).toBeUndefined();
  expect(archiveBaseUrl(binanceArchive, {})).toBe('https://data.binance.vision');
  expect(archiveBaseUrl(binanceArchive, { VENUE_BINANCE_ARCHIVE_URL: 'http://127.0.0.1:9/' })).toBe('http://127.0.0.1:9');
});

test('the index is computed per group of spans less than a day apart, not over the months between', () => {
  const day = 86_400_000;
  expect(spanGroups([{ from: 10 * day, to: 11 * day }, { from: 0, to: day }, { from: day + 5, to: 2 * day }], day)).toEqual([{ from: 0, to: 2 * day }, { from: 10 * day, to: 11 * day }]);
  expect(spanGroups([], day)).toEqual([]);
});

test('progress: a bar in place on a terminal, plain lines otherwise; counts with refusals by reason, largest first', () => {
  expect(bar(0.5, 10)).toBe('[#####-----]  50%');
  expect(bar(1.2, 4)).toBe('[####] 100%');
  const written: string[] = [];
  const out = { write: (s: string) => void written.push(s), isTTY: true } as unknown as NodeJS.WriteStream;
  const tty = new ProgressReporter(out, { everyMs: 0 });
  tty.fileStarted('x.zip', 1, 2);
  tty.update(0.25, 1000);
  expect(written.at(-1)).toMatch(/^\r\x1b\[2K\[######------------------\]  25% file 1\/2 x\.zip  1,000 rows/);
  const plain = new ProgressReporter({ ...out, isTTY: false } as unknown as NodeJS.WriteStream, { everyMs: 0 });
  plain.fileStarted('x.zip', 1, 1);
  plain.update(1, 5);
  expect(written.at(-1)).toMatch(/^\[#+\] 100% file 1\/1 x\.zip  5 rows .*\n$/);
  expect(countsLines({ read: 10, new: 5, held: 2, refused: new Map([['a', 1], ['b', 2]]) })).toEqual(['rows read 10: new 5, already held 2, refused 3', '  refused 2: b', '  refused 1: a']);
});

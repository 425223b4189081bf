import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fiatCurrencies } from '../../currency/currencies.ts';
import { createLogger } from '../../../infra/log.ts';
import { migrate } from '../../../infra/migrate.ts';
import { openStore, type Store } from '../../../infra/store.ts';
import { fxDemoSnapshotFile, FxReferenceFileError, fxReferenceJob, importFxReference, parseFxReferenceCsv, type FxReferenceRate } from '../fxReference.ts';

// Shaped like the ECB's eurofxref-hist.csv: newest day first, N/A for a currency without a rate,
// every line ending with a comma.
const ecbFile = [
  'Date,USD,JPY,BGN,CYP,GBP,',
  '2026-11-20,1.25,150,1.9558,N/A,0.875,',
  '2026-11-19,1.2,156,1.9558,N/A,0.864,',
  '',
].join('\n');

const byKey = (rates: FxReferenceRate[]) => new Map(rates.map((r) => [`${r.currency} ${r.date}`, r]));
const close = (a: number, b: number) => expect(Math.abs(a / b - 1)).toBeLessThan(1e-12);

describe('parseFxReferenceCsv', () => {
  test('converts units per EUR to units per USD through the same row', () => {
    const rates = parseFxReferenceCsv(ecbFile, 'eurofxref-hist.csv');
    // 2 days x (EUR, JPY, BGN, GBP); CYP has no rate.
    expect(rates).toHaveLength(8);
    const got = byKey(rates);
    const rows: [string, Record<string, number>][] = [
      ['2026-11-20', { USD: 1.25, JPY: 150, BGN: 1.9558, GBP: 0.875 }],
      ['2026-11-19', { USD: 1.2, JPY: 156, BGN: 1.9558, GBP: 0.864 }],
    ];
    for (const [date, perEur] of rows) {
      close(got.get(`eur ${date}`)!.perUsd, 1 / perEur.USD!);
      for (const code of ['JPY', 'BGN', 'GBP']) close(got.get(`${code.toLowerCase()} ${date}`)!.perUsd, perEur[code]! / perEur.USD!);
    }
    expect(got.has('cyp 2026-11-20')).toBe(false);
    expect(new Set(rates.map((r) => r.source))).toEqual(new Set(['file:eurofxref-hist.csv']));
  });

  test('takes lines without the trailing comma, CRLF, a BOM, comments and source lines for the file and for columns', () => {
    const text = '\uFEFF# rates we checked by hand\r\n# source: ecb\r\n# source ARS, CLP: central-banks\r\nDate,USD,ARS,CLP,JPY\r\n2026-11-20,1.25,1800,1100,150\r\n';
    const got = byKey(parseFxReferenceCsv(text, 'mixed.csv'));
    expect(got.get('eur 2026-11-20')!.source).toBe('ecb');
    expect(got.get('jpy 2026-11-20')!.source).toBe('ecb');
    expect(got.get('ars 2026-11-20')).toMatchObject({ source: 'central-banks' });
    close(got.get('ars 2026-11-20')!.perUsd, 1800 / 1.25);
    close(got.get('clp 2026-11-20')!.perUsd, 1100 / 1.25);
  });

  test('the demo snapshot covers every fiat currency served and says it is a demo snapshot', () => {
    expect(fxDemoSnapshotFile).toMatch(/demo-snapshot/);
    const text = readFileSync(fxDemoSnapshotFile, 'utf8');
    expect(text.split('\n')[0]).toMatch(/DEMO SNAPSHOT/);
    const rates = parseFxReferenceCsv(text, 'fx-demo-snapshot.csv');
    expect(new Set(rates.map((r) => r.currency))).toEqual(new Set(fiatCurrencies.filter((c) => c !== 'usd')));
    expect(new Set(rates.map((r) => r.source))).toEqual(new Set(['demo-snapshot']));
  });

  test('reports every problem of the rows with its line number, and returns nothing', () => {
    const text = [
      '# a comment line counts as a line',
      'Date,USD,JPY,',
      '2026-11-20,1.25,150,',
      '2026-11-19,1.2,abc,',
      '2026-11-18,1.2,',
      '2026-11-31,1.2,150,',
      '2026-11-20,1.2,150,',
      '2026-11-17,N/A,150,',
      '2026-11-16,1.2,-3,',
      '2026-11-15,1.2,1e3,',
      '2026-11-14,"1.2",150,',
    ].join('\n');
    let error: unknown;
    try {
      parseFxReferenceCsv(text, 'bad.csv');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(FxReferenceFileError);
    const { problems, message } = error as FxReferenceFileError;
    expect(problems).toEqual([
      'line 4: column JPY: "abc" is not a rate: expected a positive decimal number, N/A or nothing',
      'line 5: 2 fields where the header has 3',
      'line 6: Date "2026-11-31" must be a calendar date YYYY-MM-DD',
      'line 7: date 2026-11-20 already given on line 3',
      'line 8: USD has no rate: the row cannot be converted to per-USD',
      'line 9: column JPY: "-3" is not a rate: expected a positive decimal number, N/A or nothing',
      'line 10: column JPY: "1e3" is not a rate: expected a positive decimal number, N/A or nothing',
      'line 11: quoted fields are not part of the format',
    ]);
    expect(message).toContain('bad.csv');
    expect(message).toContain('line 8: USD has no rate');
  });

  test('reports header problems', () => {
    const problemsOf = (text: string) => {
      try {
        parseFxReferenceCsv(text, 'h.csv');
      } catch (err) {
        return (err as FxReferenceFileError).problems;
      }
      throw new Error('parsed without error');
    };
    expect(problemsOf('Day,USD\n2026-11-20,1.2\n')).toEqual(['line 1: the header must start with Date, found "Day"']);
    expect(problemsOf('Date,JPY,jpy,JPY,EUR\n')).toEqual([
      'line 1: column "jpy" must be a three-letter upper-case ISO 4217 code',
      'line 1: column JPY appears twice',
      'line 1: column EUR: rates are units per EUR, so EUR cannot be a column',
      'line 1: the header has no USD column, which converts every rate to per-USD',
    ]);
    expect(problemsOf('# nothing else\n\n')).toEqual(['line 3: no header line (Date,USD,...) was found']);
    expect(problemsOf('# source ARS: bcra\nDate,USD\n2026-11-20,1.2\n')).toEqual(['line 1: a source is named for column ARS, which the header does not have']);
    expect(problemsOf('# source: European Central Bank\nDate,USD\n')).toEqual([
      'line 1: source "European Central Bank" must be a lower-case name (a-z, 0-9, . _ : -), at most 64 characters',
    ]);
  });

  test('stops at 20 problems', () => {
    // 30 rows, each with a bad USD rate: lines 2 to 31.
    const rows = Array.from({ length: 30 }, (_, i) => `2026-10-${String(i + 1).padStart(2, '0')},x`);
    let error: unknown;
    try {
      parseFxReferenceCsv(['Date,USD', ...rows].join('\n'), 'many.csv');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(FxReferenceFileError);
    const { problems } = error as FxReferenceFileError;
    expect(problems).toHaveLength(20);
    expect(problems[19]).toMatch(/^line 21: /);
    // The first 20, in line order.
    expect(problems.map((p) => Number(/^line (\d+): /.exec(p)?.[1]))).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
  });
});

describe('import', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mds-fx-'));
  let store: Store;
  beforeAll(async () => {
    store = await openStore({ MDS_DATA_DIR: join(dir, 'data'), CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
    await migrate(store);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const held = () =>
    store.rows<{ date: string; currency: string; perUsd: number; source: string }>(
      'SELECT toString(date) AS date, currency, per_usd AS perUsd, source FROM fx_reference_rates FINAL ORDER BY currency, date',
    );
  const physicalRows = async () => (await store.rows<{ n: number }>('SELECT count() AS n FROM fx_reference_rates'))[0]!.n;

  test('writes each rate once; the same file again writes nothing; a corrected day replaces its rate', async () => {
    const rates = parseFxReferenceCsv(ecbFile, 'eurofxref-hist.csv');
    expect(await importFxReference(store, rates, Date.parse('2026-11-20T16:30:00Z'))).toEqual({ rates: 8, inserted: 8, unchanged: 0 });
    const first = await held();
    expect(first).toHaveLength(8);
    for (const r of first) expect(r.perUsd).toBe(byKey(rates).get(`${r.currency} ${r.date}`)!.perUsd);

    expect(await importFxReference(store, rates, Date.parse('2026-11-21T16:30:00Z'))).toEqual({ rates: 8, inserted: 0, unchanged: 8 });
    expect(await physicalRows()).toBe(8);
    expect(await held()).toEqual(first);

    const corrected = parseFxReferenceCsv(ecbFile.replace('2026-11-19,1.2,156,', '2026-11-19,1.2,156.6,'), 'eurofxref-hist.csv');
    expect(await importFxReference(store, corrected, Date.parse('2026-11-22T16:30:00Z'))).toEqual({ rates: 8, inserted: 1, unchanged: 7 });
    const after = await held();
    expect(after).toHaveLength(8);
    close(after.find((r) => r.currency === 'jpy' && r.date === '2026-11-19')!.perUsd, 156.6 / 1.2);
  });

  test('the job imports the file it is given, and a broken file changes nothing', async () => {
    const path = join(dir, 'rates.csv');
    const log = createLogger('silent');
    const signal = new AbortController().signal;
    writeFileSync(path, '# source: ecb\nDate,USD,CHF\n2026-11-23,1.3,0.91\n');
    const job = fxReferenceJob(path);
    expect(job.name).toBe('fx-reference-import');
    expect(job.everyMs).toBe(86_400_000);
    await job.run({ store, log, signal });
    const chf = (await held()).find((r) => r.currency === 'chf')!;
    expect(chf).toMatchObject({ date: '2026-11-23', source: 'ecb' });
    close(chf.perUsd, 0.91 / 1.3);

    const before = await held();
    writeFileSync(path, 'Date,USD,CHF\n2026-11-24,1.3,0.91\n2026-11-25,1.3,zero\n');
    await expect(job.run({ store, log, signal })).rejects.toThrow(/line 3: column CHF/);
    expect(await held()).toEqual(before);
  });
});

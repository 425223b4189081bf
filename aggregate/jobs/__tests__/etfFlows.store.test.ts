import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openTestStore, silentLog } from '../../../test/support/harness.ts';
import { until } from '../../../test/support/until.ts';
import { startJobs } from '../../../infra/jobs.ts';
import type { Store } from '../../../infra/store.ts';
import { EtfFlowsFileError, etfFlowsJob, importEtfFlowsDir, importEtfFlowsFile, parseEtfFlows } from '../etfFlows.ts';

const today = '2026-11-22';
const parse = (text: string, asset: 'btc' | 'eth' | 'sol' = 'btc') => parseEtfFlows(text, { file: 'flows/btc.csv', asset, today });

/** The issues of a file the parser refuses, as [line, field] pairs. */
function refused(text: string): { line: number; field: string; message: string }[] {
  try {
    parse(text);
  } catch (err) {
    expect(err).toBeInstanceOf(EtfFlowsFileError);
    return [...(err as EtfFlowsFileError).issues];
  }
  throw new Error('the file was accepted');
}

describe('parser', () => {
  test('a good file: metadata, comments, CRLF, blank lines, any row order; rows sorted by date then fund', () => {
    const file = parse(
      [
        '\uFEFF# Flows from the issuers\' daily disclosures',
        '# source: Farside Investors, https://farside.co.uk/btc/',
        '# simulated: false',
        'date,fund,flow_usd',
        '2025-01-17,IBIT,-95100000',
        '',
        '2025-01-16,FBTC,1250000.5',
        '# a comment between rows',
        '2025-01-16,IBIT,0',
        ' 2025-01-17 , GBTC , -12000000 ',
      ].join('\r\n'),
    );
    expect(file).toEqual({
      asset: 'btc',
      source: 'Farside Investors, https://farside.co.uk/btc/',
      simulated: false,
      rows: [
        { date: '2025-01-16', fund: 'FBTC', flowUsd: 1250000.5 },
        { date: '2025-01-16', fund: 'IBIT', flowUsd: 0 },
        { date: '2025-01-17', fund: 'GBTC', flowUsd: -12000000 },
        { date: '2025-01-17', fund: 'IBIT', flowUsd: -95100000 },
      ],
    });
  });

  test('without metadata the source is the file name and the data is not simulated', () => {
    expect(parse('date,fund,flow_usd\n2025-01-16,IBIT,1\n')).toMatchObject({ source: 'btc.csv', simulated: false });
    expect(parse('# simulated: true\ndate,fund,flow_usd\n2025-01-16,IBIT,1\n')).toMatchObject({ simulated: true });
  });

  test('a holiday stays a gap: no row is made up for it, and a zero stays a reported zero', () => {
    // 2025-01-20 (Martin Luther King Jr. Day): markets closed, the file has nothing for it.
    const file = parse('date,fund,flow_usd\n2025-01-17,IBIT,5\n2025-01-17,FBTC,0\n2025-01-21,IBIT,7\n');
    expect(file.rows.map((r) => r.date)).toEqual(['2025-01-17', '2025-01-17', '2025-01-21']);
    expect(file.rows.find((r) => r.fund === 'FBTC')).toEqual({ date: '2025-01-17', fund: 'FBTC', flowUsd: 0 });
    expect(file.rows.some((r) => r.fund === 'FBTC' && r.date === '2025-01-21')).toBe(false);
  });

  test('bad lines are refused with their line number and field, all of them in one pass', () => {
    const issues = refused(
      [
        'date,fund,flow_usd', // 1
        '2025-01-16,IBIT,100', // 2 good
        '2025-02-30,IBIT,1', // 3 not a calendar date
        '2025-01-18,IBIT,1', // 4 a Saturday
        '2026-11-23,IBIT,1', // 5 after today
        '2025-01-16,ETHA,1', // 6 an ether fund in the bitcoin file
        '2025-01-16,FBTC,(95.1)', // 7 Farside's negative notation
        '2025-01-16,BITB,-', // 8 Farside's "no data"
        '2025-01-16,ARKB,1,234', // 9 thousands separator -> four fields
        '2025-01-16,HODL,', // 10 empty flow
        '2025-01-16,IBIT,200', // 11 repeats line 2
        '2024-07-30,BTC,1', // 12 before the mini trust's launch (2024-07-31)
        '16/01/2025,GBTC,1e6', // 13 two bad fields
        '# source: too late', // 14 metadata after the header
      ].join('\n'),
    );
    expect(issues.map((i) => [i.line, i.field])).toEqual([
      [3, 'date'],
      [4, 'date'],
      [5, 'date'],
      [6, 'fund'],
      [7, 'flow_usd'],
      [8, 'flow_usd'],
      [9, 'row'],
      [10, 'flow_usd'],
      [11, 'row'],
      [12, 'date'],
      [13, 'date'],
      [13, 'flow_usd'],
      [14, 'source'],
    ]);
    expect(issues.find((i) => i.line === 11)!.message).toContain('line 2');
    expect(issues.find((i) => i.line === 6)!.message).toContain('IBIT');
    expect(issues.find((i) => i.line === 12)!.message).toContain('2024-07-31');
  });

  test('the error message names file, line and field', () => {
    expect(() => parse('date,fund,flow_usd\n2025-01-16,IBIT,abc\n')).toThrow(/flows\/btc\.csv:2: flow_usd: "abc" must be a plain number/);
  });

  test('a wrong header, no header, or no rows refuses the whole file', () => {
    expect(refused('date,ticker,flow\n2025-01-16,IBIT,1\n').map((i) => [i.line, i.field])).toEqual([[1, 'header']]);
    expect(refused('# only a comment\n').map((i) => [i.line, i.field])).toEqual([[0, 'header']]);
    expect(refused('date,fund,flow_usd\n').map((i) => [i.line, i.field])).toEqual([[0, 'file']]);
    expect(refused('# simulated: maybe\ndate,fund,flow_usd\n2025-01-16,IBIT,1\n').map((i) => [i.line, i.field])).toEqual([[1, 'simulated']]);
  });
});

describe('import into ClickHouse', () => {
  let env: Awaited<ReturnType<typeof openTestStore>>;
  let store: Store;
  const dir = mkdtempSync(join(tmpdir(), 'mds-etf-import-'));
  beforeAll(async () => {
    env = await openTestStore();
    store = env.store;
  });
  afterAll(async () => {
    await env.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const liveRows = (asset: string) =>
    store.rows<{ date: string; fund: string; flow_usd: number; simulated: boolean; source: string }>(
      'SELECT toString(date) AS date, fund, flow_usd, simulated, source FROM etf_flows FINAL WHERE asset = {asset:String} ORDER BY date, fund',
      { asset },
    );
  const storedVersions = async (asset: string) =>
    (await store.rows<{ n: number }>('SELECT count() AS n FROM etf_flows WHERE asset = {asset:String}', { asset }))[0]!.n;

  /** The file's data rows as the test reads them: [date, fund, flow]. */
  const csvRows = (text: string) =>
    text
      .split('\n')
      .filter((l) => /^\d{4}-/.test(l))
      .map((l) => l.split(','))
      .map(([date, fund, flow]) => ({ date: date!, fund: fund!, flow_usd: Number(flow) }))
      .sort((a, b) => (a.date + a.fund < b.date + b.fund ? -1 : 1));

  test('importing twice gives the same rows and writes nothing the second time; a changed file replaces, adds and removes', async () => {
    const file = join(dir, 'eth.csv');
    const first = '# source: test\ndate,fund,flow_usd\n2025-03-03,ETHA,10.25\n2025-03-03,FETH,0\n2025-03-04,ETHA,-3\n2025-03-04,ETHE,-40000000\n';
    writeFileSync(file, first);
    const now = Date.parse('2025-03-05T12:00:00Z');
    expect(await importEtfFlowsFile(store, file, now)).toEqual({ file, asset: 'eth', rows: 4, written: 4, deleted: 0 });
    const afterFirst = await liveRows('eth');
    expect(afterFirst.map(({ date, fund, flow_usd }) => ({ date, fund, flow_usd }))).toEqual(csvRows(first));
    expect(afterFirst.every((r) => r.source === 'test' && r.simulated === false)).toBe(true);

    expect(await importEtfFlowsFile(store, file, now + 3_600_000)).toEqual({ file, asset: 'eth', rows: 4, written: 0, deleted: 0 });
    expect(await liveRows('eth')).toEqual(afterFirst);
    expect(await storedVersions('eth')).toBe(4);

    // A late report fills a gap, a figure is revised, and a wrong row leaves the file.
    const second = '# source: test\ndate,fund,flow_usd\n2025-03-03,ETHA,10.25\n2025-03-03,FETH,0\n2025-03-04,ETHA,-3.5\n2025-03-04,FETH,7\n';
    writeFileSync(file, second);
    expect(await importEtfFlowsFile(store, file, now + 7_200_000)).toEqual({ file, asset: 'eth', rows: 4, written: 2, deleted: 1 });
    expect((await liveRows('eth')).map(({ date, fund, flow_usd }) => ({ date, fund, flow_usd }))).toEqual(csvRows(second));
    expect(await importEtfFlowsFile(store, file, now + 10_800_000)).toMatchObject({ written: 0, deleted: 0 });

    // Marking the same numbers as simulated rewrites every row: the flag must never be stale.
    writeFileSync(file, `# simulated: true\n${second}`);
    expect(await importEtfFlowsFile(store, file, now + 14_400_000)).toMatchObject({ written: 4, deleted: 0 });
    expect((await liveRows('eth')).every((r) => r.simulated)).toBe(true);
  });

  test('a file that fails validation changes nothing', async () => {
    const file = join(dir, 'sol.csv');
    writeFileSync(file, 'date,fund,flow_usd\n2025-11-03,BSOL,5\n');
    await importEtfFlowsFile(store, file, Date.parse('2025-11-04T00:00:00Z'));
    writeFileSync(file, 'date,fund,flow_usd\n2025-11-03,BSOL,6\n2025-11-04,NOPE,1\n');
    await expect(importEtfFlowsFile(store, file, Date.parse('2025-11-05T00:00:00Z'))).rejects.toThrow(/sol\.csv:3: fund/);
    expect((await liveRows('sol')).map((r) => r.flow_usd)).toEqual([5]);
  });

  test('a file named after no asset is refused', async () => {
    const file = join(dir, 'doge.csv');
    writeFileSync(file, 'date,fund,flow_usd\n');
    await expect(importEtfFlowsFile(store, file)).rejects.toThrow(/doge\.csv:0: file: the name must be the asset: btc\.csv, eth\.csv, sol\.csv/);
  });

  test('a directory import loads the good files and fails, naming the bad one', async () => {
    const sub = join(dir, 'mixed');
    mkdirSync(sub);
    writeFileSync(join(sub, 'btc.csv'), 'date,fund,flow_usd\n2025-06-02,IBIT,100\n');
    writeFileSync(join(sub, 'eth.csv'), 'date,fund,flow_usd\n2025-06-02,ETHA,(5)\n');
    writeFileSync(join(sub, 'notes.txt'), 'not a flow file');
    await expect(importEtfFlowsDir(store, sub, { log: silentLog })).rejects.toThrow(/1 of 2 ETF flow files failed:[\s\S]*eth\.csv:2: flow_usd/);
    expect((await liveRows('btc')).map((r) => [r.date, r.fund, r.flow_usd])).toEqual([['2025-06-02', 'IBIT', 100]]);
  });

  test('a directory run writes its files in one insert: readers see all of them or none', async () => {
    const sub = join(dir, 'together');
    mkdirSync(sub);
    writeFileSync(join(sub, 'btc.csv'), 'date,fund,flow_usd\n2025-06-04,IBIT,1\n');
    writeFileSync(join(sub, 'eth.csv'), 'date,fund,flow_usd\n2025-06-04,ETHA,2\n');
    const inserts: { table: string; rows: number }[] = [];
    // The real store, with its inserts counted.
    const counted: Store = { ...store, insert: (table, rows, token) => (inserts.push({ table, rows: rows.length }), store.insert(table, rows, token)) };
    // Earlier tests left rows of both assets: the files replace them, one tombstone each.
    const held = { btc: (await liveRows('btc')).length, eth: (await liveRows('eth')).length };
    const results = await importEtfFlowsDir(counted, sub, { log: silentLog, now: Date.parse('2025-06-05T00:00:00Z') });
    expect(results.map((r) => [r.asset, r.written, r.deleted])).toEqual([['btc', 1, held.btc], ['eth', 1, held.eth]]);
    expect(inserts).toEqual([{ table: 'etf_flows', rows: 2 + held.btc + held.eth }]);
    expect((await liveRows('eth')).map((r) => [r.date, r.fund, r.flow_usd])).toEqual([['2025-06-04', 'ETHA', 2]]);
  });

  test('the job, driven by the embedded runner, imports the directory', async () => {
    const sub = join(dir, 'job');
    mkdirSync(sub);
    const text = 'date,fund,flow_usd\n2025-06-02,IBIT,100\n2025-06-03,IBIT,-20\n2025-06-03,FBTC,1.5\n';
    writeFileSync(join(sub, 'btc.csv'), text);
    const runner = await startJobs([etfFlowsJob(sub)], { store, log: silentLog });
    try {
      await until(async () => (await liveRows('btc')).length === 3, 'the job to import the file');
    } finally {
      await runner.stop();
    }
    expect((await liveRows('btc')).map(({ date, fund, flow_usd }) => ({ date, fund, flow_usd }))).toEqual(csvRows(text));
    expect(etfFlowsJob(sub)).toMatchObject({ name: 'etf-flows', everyMs: 3_600_000 });
  });
});

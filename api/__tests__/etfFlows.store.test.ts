// The ETF flow endpoints, with every number recomputed here from the CSV text alone.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { importEtfFlowsDir } from '../../aggregate/jobs/etfFlows.ts';
import { monthsBefore } from '../routes/etfFlows.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { silentLog } from '../../test/support/harness.ts';
import { openApiValidators } from '../../test/support/openapi.ts';

const reference = new URL('../../infra/reference/', import.meta.url);
const fundsJson = JSON.parse(readFileSync(new URL('etf-funds.json', reference), 'utf8')) as { ticker: string; asset: string }[];
const importedAt = Date.parse('2026-11-21T09:30:00Z');

const dir = mkdtempSync(join(tmpdir(), 'mds-etf-api-'));
const files: Record<string, string> = {};

/** Weekdays from..to without the listed closures: sol rows with cents, gaps, zeros, a late fund. */
function solFixture(): string {
  const closed = new Set(['2025-12-25', '2026-01-01', '2026-01-19', '2026-02-16']);
  const lines = ['# source: test fixture', 'date,fund,flow_usd'];
  let i = 0;
  for (let t = Date.parse('2025-12-01T00:00:00Z'); t <= Date.parse('2026-03-31T00:00:00Z'); t += 86_400_000) {
    const day = new Date(t);
    const date = day.toISOString().slice(0, 10);
    if (day.getUTCDay() === 0 || day.getUTCDay() === 6 || closed.has(date)) continue;
    i++;
    lines.push(`${date},BSOL,${((i * 7919) % 1000) * 1000 - 400_000 + 0.25}`);
    if (i % 7 !== 3) lines.push(`${date},GSOL,-${(i % 5) * 100_000}.5`);
    lines.push(`${date},FSOL,${i % 2 === 0 ? 0 : i * 10_000}`);
  }
  return `${lines.join('\n')}\n`;
}

const api = useTestApi({ keyName: 'etf-flows-test' });
beforeAll(() => {
  for (const asset of ['btc', 'eth']) copyFileSync(new URL(`etf-flows-demo/${asset}.csv`, reference), join(dir, `${asset}.csv`));
  writeFileSync(join(dir, 'sol.csv'), solFixture());
  for (const asset of ['btc', 'eth', 'sol']) files[asset] = readFileSync(join(dir, `${asset}.csv`), 'utf8');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// ---- the test's own reading of the files and of the window definitions ----

interface Row {
  date: string;
  fund: string;
  flow: number;
}
const rowsOf = (text: string): Row[] =>
  text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('date,'))
    .map((l) => {
      const [date, fund, flow] = l.split(',');
      return { date: date!, fund: fund!, flow: Number(flow) };
    });

function calendarMonthsBack(date: string, n: number): string {
  let [y, m, d] = date.split('-').map(Number) as [number, number, number];
  m -= n;
  while (m < 1) {
    m += 12;
    y -= 1;
  }
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const length = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!;
  return `${y}-${String(m).padStart(2, '0')}-${String(Math.min(d, length)).padStart(2, '0')}`;
}

const sum = (rows: readonly Row[]) => rows.reduce((s, r) => s + r.flow, 0);

function expectUsd(actual: number | null, expected: number | null, what: string) {
  if (expected === null) return expect(actual, what).toBeNull();
  expect(actual, what).not.toBeNull();
  expect(Math.abs(actual! - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(expected)));
}

/** Checks one asset of the response against its CSV. */
function checkAsset(body: any, asset: string) {
  const rows = rowsOf(files[asset]!);
  const tickers = fundsJson.filter((f) => f.asset === asset).map((f) => f.ticker);
  const days = [...new Set(rows.map((r) => r.date))].sort();
  const asOf = days.at(-1)!;
  expect(body.asset).toBe(asset);
  expect(body.funds.map((f: any) => f.ticker)).toEqual(tickers);
  expect(body.days).toEqual(days);
  expect(body.asOf).toBe(asOf);
  expect(body.updatedAt).toBe(importedAt);
  const byCell = new Map(rows.map((r) => [`${r.date} ${r.fund}`, r]));
  for (const [i, day] of days.entries()) {
    for (const [j, ticker] of tickers.entries()) {
      const row = byCell.get(`${day} ${ticker}`);
      expect(body.grid[i][j], `${asset} ${day} ${ticker}`).toBe(row ? row.flow : null);
    }
    expectUsd(body.dailyTotals[i], sum(rows.filter((r) => r.date === day)), `${asset} total ${day}`);
  }
  for (const [j, ticker] of tickers.entries()) {
    const mine = rows.filter((r) => r.fund === ticker);
    expectUsd(body.funds[j].cumulativeFlow, mine.length ? sum(mine) : null, `${asset} ${ticker} cumulative`);
  }
  const windows: Record<string, string[]> = {
    '5d': days.slice(-5),
    '1m': days.filter((d) => d > calendarMonthsBack(asOf, 1)),
    '3m': days.filter((d) => d > calendarMonthsBack(asOf, 3)),
    ytd: days.filter((d) => d.slice(0, 4) === asOf.slice(0, 4)),
    sinceLaunch: days,
  };
  expect(body.windowTotals.map((w: any) => w.window)).toEqual(Object.keys(windows));
  for (const w of body.windowTotals) {
    const inWindow = new Set(windows[w.window]);
    const windowRows = rows.filter((r) => inWindow.has(r.date));
    expect(w, `${asset} ${w.window}`).toMatchObject({ from: windows[w.window]![0], to: asOf, tradingDays: inWindow.size });
    expectUsd(w.total, sum(windowRows), `${asset} ${w.window} total`);
    expect(Object.keys(w.byFund)).toEqual(tickers);
    for (const ticker of tickers) {
      const mine = windowRows.filter((r) => r.fund === ticker);
      expectUsd(w.byFund[ticker], mine.length ? sum(mine) : null, `${asset} ${w.window} ${ticker}`);
    }
  }
}

// ---- tests ----

test('503 unavailable before anything is loaded; 404 for an asset we do not follow', async () => {
  for (const path of ['/v1/etf-flows', '/v1/etf-flows/btc']) {
    const res = await api.get(path);
    expect(res.status, path).toBe(503);
    expect((res.json as any).error.code).toBe('unavailable');
  }
  for (const asset of ['doge', 'BTC', 'bitcoin']) {
    const res = await api.get(`/v1/etf-flows/${asset}`);
    expect(res.status, asset).toBe(404);
    expect((res.json as any).error).toMatchObject({ code: 'not_found' });
    expect((res.json as any).error.message).toContain('btc, eth, sol');
  }
});

test('once loaded: funds, days, grid, daily and window totals of each asset, recomputed from its CSV', async () => {
  await importEtfFlowsDir(api.store, dir, { log: silentLog, now: importedAt });
  const res = await api.get('/v1/etf-flows');
  expect(res.status).toBe(200);
  const body = res.json as any;
  expect(body.assets.map((a: any) => a.asset)).toEqual(['btc', 'eth', 'sol']);
  for (const a of body.assets) checkAsset(a, a.asset);
  const asOfs = ['btc', 'eth', 'sol'].map((a) => rowsOf(files[a]!).map((r) => r.date).sort().at(-1)!);
  expect(body).toMatchObject({ asOf: asOfs.sort().at(-1), updatedAt: importedAt, simulated: true });
});

test('holidays are gaps, and a fund that reported nothing is null, not zero', async () => {
  const body = (await api.get('/v1/etf-flows')).json as any;
  const [btc, , sol] = body.assets;
  expect(btc.days).not.toContain('2024-01-15'); // Martin Luther King Jr. Day in the demo calendar
  expect(sol.days).not.toContain('2026-02-16');
  const gsol = sol.funds.findIndex((f: any) => f.ticker === 'GSOL');
  const cells = sol.grid.map((row: any[]) => row[gsol]);
  expect(cells).toContain(null);
  expect(sol.grid.flat()).toContain(0);
  // Funds with no rows at all are listed with a null cumulative flow and null window sums.
  const soez = sol.funds.find((f: any) => f.ticker === 'SOEZ');
  expect(soez).toMatchObject({ issuer: 'Franklin Templeton', launchDate: '2025-11-26', cumulativeFlow: null });
});

test('source and simulated say where the numbers come from', async () => {
  const body = (await api.get('/v1/etf-flows')).json as any;
  const [btc, eth, sol] = body.assets;
  for (const demo of [btc, eth]) expect(demo).toMatchObject({ simulated: true, source: 'SIMULATED demo data (simulator/etfFlowsDemo.ts)' });
  expect(sol).toMatchObject({ simulated: false, source: 'test fixture' });
});

test('the per-asset route serves the same object as the list', async () => {
  const list = (await api.get('/v1/etf-flows')).json as any;
  for (const asset of ['btc', 'eth', 'sol']) {
    const res = await api.get(`/v1/etf-flows/${asset}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, max-age=3600');
    expect(res.json).toEqual(list.assets.find((a: any) => a.asset === asset));
  }
});

test('responses match the OpenAPI document', async () => {
  const doc = (await api.getWithoutKey('/v1/openapi.json')).json as any;
  for (const [path, url] of [
    ['/v1/etf-flows', '/v1/etf-flows'],
    ['/v1/etf-flows/{asset}', '/v1/etf-flows/sol'],
  ] as const) {
    const validate = openApiValidators(doc).response(path, 200);
    expect(validate((await api.get(url)).json), JSON.stringify(validate.errors)).toBe(true);
    expect(Object.keys(doc.paths[path].get.responses)).toContain('503');
  }
  expect(Object.keys(doc.paths['/v1/etf-flows/{asset}'].get.responses)).toContain('404');
});

test('calendar month windows clamp to the end of a shorter month', () => {
  expect(monthsBefore('2025-03-31', 1)).toBe('2025-02-28');
  expect(monthsBefore('2024-03-31', 1)).toBe('2024-02-29');
  expect(monthsBefore('2025-05-31', 3)).toBe('2025-02-28');
  expect(monthsBefore('2025-01-15', 1)).toBe('2024-12-15');
  expect(monthsBefore('2026-03-31', 3)).toBe('2025-12-31');
  for (const [date, n] of [['2025-03-31', 1], ['2024-03-31', 1], ['2025-05-31', 3], ['2025-01-15', 1], ['2024-12-31', 2]] as const)
    expect(monthsBefore(date, n)).toBe(calendarMonthsBack(date, n));
});

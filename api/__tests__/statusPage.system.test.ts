/// <reference lib="dom" />
// The public status page in headless Chromium, against the service's own parts (the composition
// root's store, bus, aggregator, collectors and HTTP) fed by the market simulator in this process:
// no console errors, prices that move, a venue shown disconnected once the simulator drops it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { selectVenues } from '../../ingest/venues/registry.ts';
import { loadConfig } from '../../infra/config.ts';
import { createMetrics } from '../../infra/metrics.ts';
import { startAggregate } from '../../infra/roles/aggregate.ts';
import { startHttp } from '../../infra/roles/api.ts';
import { openRoleBus } from '../../infra/roles/bus.ts';
import type { RoleContext } from '../../infra/roles/context.ts';
import { startIngest } from '../../infra/roles/ingest.ts';
import { Lifecycle } from '../../infra/roles/lifecycle.ts';
import { openRoleStore } from '../../infra/roles/store.ts';
import { collectPageErrors, openBrowser } from '../../test/support/browser.ts';
import { startSimulator, type Simulator } from '../../simulator/simulator.ts';
import { CounterRates } from '../status/processStatus.ts';
import { statusResponse, type StatusResponse } from '../status/statusData.ts';
import { silentLog } from '../../test/support/harness.ts';
import { untilValue } from '../../test/support/until.ts';

const dir = mkdtempSync(join(tmpdir(), 'mds-status-page-'));
const venues = ['binance', 'coinbase', 'kraken'] as const;
let sim: Simulator;
let ctx: RoleContext;
let url: string;
let browser: Browser;

beforeAll(async () => {
  sim = await startSimulator({ venues, tickers: ['BTC', 'ETH', 'SOL'], seed: 1313, tradesPerSecondPerMarket: 3, tickMs: 200 });
  const config = loadConfig({ MDS_DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', AGGREGATE_BATCH_MS: '200', STATUS_ASSETS: 'bitcoin,ethereum' });
  ctx = { config, log: silentLog, life: new Lifecycle(silentLog), metrics: createMetrics(), checks: [] };
  ctx.life.add('simulator', 'base', () => sim.close());
  // The all role's parts, in main.ts's order, against the simulator's venues.
  const opened = await openRoleStore(ctx, { migrate: true });
  const bus = await openRoleBus(ctx, false);
  await startAggregate(ctx, opened, bus);
  await startIngest(ctx, bus, { venues: selectVenues(venues.join(',')), ccxtVenues: [], assets: undefined, endpointsOf: (v) => sim.endpoints(v.id as (typeof venues)[number]) });
  ({ url } = await startHttp(ctx, opened, { api: true, aggregatorHere: true }));
  browser = await openBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await ctx?.life.shutdown('test end');
  rmSync(dir, { recursive: true, force: true });
});

async function status(): Promise<StatusResponse> {
  const res = await fetch(`${url}/status.json`);
  expect(res.status).toBe(200);
  return statusResponse.parse(await res.json());
}

const priceText = (page: Page, asset: string) => page.locator(`[data-asset="${asset}"] .price`).textContent();
const dollars = (text: string | null) => Number(text?.replace(/[$,]/g, ''));

test('the status page needs no key, shows only STATUS_ASSETS prices, and /status.json is rebuilt at most once a second', async () => {
  const page = await fetch(`${url}/`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/text\/html/);
  expect((await fetch(`${url}/status/lightweight-charts.js`)).status).toBe(200);
  // Everything else still needs a key.
  expect((await fetch(`${url}/v1/prices`)).status).toBe(401);

  const first = await untilValue(
    async () => {
      const s = await status();
      return s.assets.every((a) => a.price !== null) ? s : undefined;
    },
    'index prices',
    { timeoutMs: 25_000, everyMs: 250 },
  );
  expect(first.assets.map((a) => a.assetId)).toEqual(['bitcoin', 'ethereum']);
  // Within the simulator's spread of its reference (the index is a volume-weighted mean of its venues).
  for (const [asset, ticker] of [['bitcoin', 'BTC'], ['ethereum', 'ETH']] as const) {
    const price = first.assets.find((a) => a.assetId === asset)!.price!;
    expect(Math.abs(price / sim.reference(ticker, 'USD') - 1)).toBeLessThan(0.01);
  }
  // Two requests within the same second get the same build.
  const [a, b] = await Promise.all([status(), status()]);
  expect(a.at).toBe(b.at);
}, 40_000);

test('in Chromium: no console errors, prices change, a dropped venue turns disconnected, no horizontal overflow', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = collectPageErrors(page);
  await page.goto(`${url}/`);
  await page.waitForFunction(() => [...document.querySelectorAll('[data-asset] .price')].every((p) => p.textContent?.startsWith('$')), undefined, { timeout: 20_000 });
  const before = await priceText(page, 'bitcoin');
  expect(dollars(before)).toBeGreaterThan(0);
  // The simulator's prices move every tick: the page shows a new price within a few polls.
  await page.waitForFunction((old) => document.querySelector('[data-asset="bitcoin"] .price')?.textContent !== old, before, { timeout: 10_000 });
  expect(dollars(await priceText(page, 'bitcoin'))).not.toBe(dollars(before));
  // A candle chart per asset, drawn by lightweight-charts once the candles arrive.
  await page.waitForSelector('[data-asset="bitcoin"] .candles canvas', { timeout: 15_000 });

  for (const venue of venues) await page.waitForSelector(`tr[data-venue="${venue}"][data-state="connected"]`, { timeout: 15_000 });
  // Kraken goes away for a minute: its sockets drop and reconnections are refused.
  sim.venue('kraken').faults.outage(60_000);
  await page.waitForSelector('tr[data-venue="kraken"][data-state="disconnected"]', { timeout: 15_000 });
  expect(await page.locator('tr[data-venue="binance"]').getAttribute('data-state')).toBe('connected');
  // The index leaves kraken's markets out, and the page says why.
  const excluded = await page.waitForSelector('tr[data-excluded^="kraken:"]', { timeout: 15_000 });
  expect(await excluded.evaluate((tr) => tr.lastElementChild?.textContent)).toBe('disconnected');
  await page.waitForSelector('[data-check="collectors"]');
  await page.screenshot({ path: '/tmp/status-desktop.png', fullPage: true });

  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(await overflow()).toBeLessThanOrEqual(0);
  const updated = await page.locator('#updated').textContent();
  await page.setViewportSize({ width: 390, height: 844 });
  // A status refresh drawn at this width (one every 1.5 s): the time it shows moves on.
  await page.waitForFunction((old) => document.getElementById('updated')?.textContent !== old, updated, { timeout: 10_000 });
  expect(await overflow()).toBeLessThanOrEqual(0);
  await page.screenshot({ path: '/tmp/status-narrow.png', fullPage: true });
  await page.screenshot({ path: '/tmp/status-narrow-top.png' });
  expect(errors).toEqual([]);
  await page.close();
}, 60_000);

test('message rates: against a sample about 10 s old, none after a counter reset or against one over a minute old', () => {
  const rates = new CounterRates();
  const at = (s: number, values: Record<string, number>) => Object.fromEntries(rates.rates(s * 1000, new Map(Object.entries(values))));
  expect(at(0, { a: 100 })).toEqual({});
  expect(at(2, { a: 120 })).toEqual({ a: 10 });
  expect(at(11, { a: 210 })).toEqual({ a: 10 });
  // The sample at 2 s is now the one about 10 s back: (300 - 120) / 10 s.
  expect(at(12, { a: 300 })).toEqual({ a: 18 });
  // A collector restarted: its counter starts again from 0.
  expect(at(13, { a: 5 })).toEqual({});
  // Nobody looked for two minutes: no rate from a sample that old.
  expect(at(133, { a: 500 })).toEqual({});
  expect(at(134, { a: 510 })).toEqual({ a: 10 });
});

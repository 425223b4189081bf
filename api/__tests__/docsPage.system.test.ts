// The API reference at /docs in headless Chromium, against the running API: the endpoints and
// the demo examples are shown, a reader's key makes a real request, nothing is fetched from
// another origin, nothing is logged as an error. Screenshots: /tmp/docs-desktop.png, /tmp/docs-narrow.png.
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { collectPageErrors, openBrowser } from '../../test/support/browser.ts';
import { computeIndex, trade } from '../../test/support/harness.ts';

const pricesExample = JSON.parse(readFileSync(new URL('../openapi-examples/prices.json', import.meta.url), 'utf8')) as { prices: { price: number }[] };

let browser: Browser;
// One desktop page for the first two tests (the reference is a 4 MB script to parse): what it
// logged and fetched.
let page: Page;
let errors: string[];
const requested: string[] = [];
const elsewhere: string[] = [];
const loopback = new Set(['127.0.0.1', 'localhost', '[::1]']);

const api = useTestApi({
  keyName: 'docs-page-test',
  seed: async (store) => {
    const now = Date.now();
    await store.insert(
      'trades',
      Array.from({ length: 10 }, (_, i) => trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: String(i), ts: now - 600_000 + i * 60_000, price: 90_000 + i, quantity: 0.1 })),
    );
    await computeIndex(store, now);
  },
});

/** A page of the given size whose errors are collected and whose requests are recorded. */
async function openPage(viewport: { width: number; height: number }): Promise<{ page: Page; errors: string[] }> {
  const opened = await browser.newPage({ viewport });
  opened.on('request', (req) => {
    const url = new URL(req.url());
    requested.push(url.pathname);
    if (url.protocol !== 'data:' && url.protocol !== 'blob:' && !loopback.has(url.hostname)) elsewhere.push(req.url());
  });
  return { page: opened, errors: collectPageErrors(opened) };
}

beforeAll(async () => {
  browser = await openBrowser();
  ({ page, errors } = await openPage({ width: 1400, height: 1000 }));
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

test('the reference shows every endpoint and the demo examples, loads nothing from another origin, logs no error', async () => {
  await page.goto(`${api.url}/docs`);
  // Endpoints by path in the sidebar, grouped by tag.
  const sidebarEntry = (path: string) => page.getByText(path, { exact: true }).first();
  await sidebarEntry('/v1/prices').waitFor({ state: 'visible', timeout: 30_000 });
  await expect.poll(() => sidebarEntry('/v1/coins/{id}/ohlc').isVisible()).toBe(true);
  expect(await page.getByText('Attribution', { exact: true }).first().isVisible()).toBe(true);
  // An endpoint: its summary, and the price of the demo's example body.
  await page.goto(`${api.url}/docs#tag/coins/GET/v1/prices`);
  await page.getByText('USD index prices of the catalogue or of the listed assets').first().waitFor({ state: 'visible', timeout: 15_000 });
  await page.getByText(String(pricesExample.prices[0]!.price)).first().waitFor({ state: 'visible', timeout: 15_000 });
  await page.screenshot({ path: '/tmp/docs-desktop.png' });
  expect(requested).toEqual(expect.arrayContaining(['/docs/assets/scalar.js', '/v1/openapi.json']));
  expect(elsewhere).toEqual([]);
  expect(errors).toEqual([]);
}, 60_000);

test("a reader's key makes a real request from the page", async () => {
  const keyInput = page.locator('input:not([type=checkbox])').first();
  await keyInput.waitFor({ state: 'visible', timeout: 15_000 });
  await keyInput.fill(api.key);
  await page.getByRole('button', { name: /^Test Request/ }).first().click();
  const answered = page.waitForResponse((res) => new URL(res.url()).pathname === '/v1/prices', { timeout: 15_000 });
  await page.getByRole('button', { name: /^Send/ }).first().click();
  const res = await answered;
  // Sent with the key under the x-api-key scheme, and answered with the data.
  expect(res.request().headers()['x-api-key']).toBe(api.key);
  expect(res.status()).toBe(200);
  await page.getByText('"assetId"').first().waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.press('Escape');
  expect(elsewhere).toEqual([]);
  expect(errors).toEqual([]);
}, 60_000);

// A page of its own, opened narrow: the desktop page's resize and closed request client once left
// Chromium without a frame to capture for 30 s on a loaded CI machine.
test('on a narrow screen the page does not overflow sideways', async () => {
  const narrow = await openPage({ width: 400, height: 900 });
  await narrow.page.goto(`${api.url}/docs#tag/coins/GET/v1/coins/{id}/ohlc`);
  await narrow.page.getByText('Index candles of an asset, built from the trade feed').first().waitFor({ state: 'visible', timeout: 30_000 });
  expect(await narrow.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(400);
  await narrow.page.screenshot({ path: '/tmp/docs-narrow.png', timeout: 60_000 });
  expect(elsewhere).toEqual([]);
  expect(narrow.errors).toEqual([]);
}, 120_000);

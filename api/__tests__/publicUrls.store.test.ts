import { request } from 'node:http';
import { beforeAll, expect, test } from 'vitest';
import { findAsset } from '../../infra/catalog/catalog.ts';
import type { ApiServer } from '../server.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, testConfig, trade } from '../../test/support/harness.ts';

// PUBLIC_BASE_URL makes the URLs of responses absolute; a request's Host header never enters them.

const base = 'https://data.example.com/mds';
const forgedHost = 'evil.example:666';
const paths = ['/v1/coins?ids=bitcoin', '/v1/coins/bitcoin', '/v1/categories', '/v1/new-coins'];



/** A GET with a Host header of our choosing (fetch sets its own). */
function getWithHost(url: string, host: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host, 'x-api-key': api.key } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject).end();
  });
}

// The harness's API runs without PUBLIC_BASE_URL; a second one with it.
const api = useTestApi({
  keyName: 'urls-test',
  seed: async (store) => {
    const now = Date.now();
    const trades = [];
    for (let i = 0; i < 20; i++) {
      trades.push(trade({ venue: 'coinbase', market: 'BTC-USD', asset: 'bitcoin', quote: 'USD', trade_id: `c${i}`, ts: now - 20 * 60_000 + i * 55_000, price: 90_000 + i, quantity: 0.5 }));
      trades.push(trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: `b${i}`, ts: now - 20 * 60_000 + i * 55_000 + 500, price: 90_010 + i, quantity: 0.25 }));
    }
    await store.insert('trades', trades);
    // The profile's value currencies need a rate.
    const today = new Date(now).toISOString().slice(0, 10);
    await store.insert('fx_reference_rates', ['ars', 'brl', 'sek'].map((currency) => ({ date: today, currency, per_usd: 10, source: 'test', imported_at: now })));
    await computeIndex(store, now, 30 * 60_000);
  },
});
let withBase: ApiServer;
beforeAll(async () => {
  withBase = await api.serve({ env: { PUBLIC_BASE_URL: `${base}/` } });
});

test.each([
  ['with PUBLIC_BASE_URL', () => withBase, base],
  ['without it', () => api.server, ''],
])('%s: logos are under the configured base, and a forged Host header appears in no response', async (_what, server, prefix) => {
  const bitcoin = findAsset('bitcoin')!;
  expect(bitcoin.image.large).toMatch(/^\/assets\/coins\//);
  const bodies: Record<string, string> = {};
  // The forged request comes first, so it is the one that fills the response cache.
  for (const path of paths) {
    const forged = await getWithHost(`${server().url}${path}`, forgedHost);
    const plain = await getWithHost(`${server().url}${path}`, new URL(server().url).host);
    expect(forged.status, path).toBe(200);
    for (const text of [forged.text, plain.text]) expect(text, path).not.toContain('evil.example');
    bodies[path] = plain.text;
  }
  const row = (JSON.parse(bodies['/v1/coins?ids=bitcoin']!) as { coins: { image: string }[] }).coins[0]!;
  expect(row.image).toBe(`${prefix}${bitcoin.image.large}`);
  const profile = JSON.parse(bodies['/v1/coins/bitcoin']!) as { image: Record<string, string> };
  expect(profile.image).toEqual({ thumb: `${prefix}${bitcoin.image.thumb}`, small: `${prefix}${bitcoin.image.small}`, large: `${prefix}${bitcoin.image.large}` });
  const categories = JSON.parse(bodies['/v1/categories']!) as { top_3_coins: string[]; top_3_coins_id: string[] }[];
  const withBitcoin = categories.find((c) => c.top_3_coins_id.includes('bitcoin'))!;
  expect(withBitcoin.top_3_coins[withBitcoin.top_3_coins_id.indexOf('bitcoin')]).toBe(`${prefix}${bitcoin.image.small}`);
  // And the logo is served at that address (relative to the API's own origin here).
  const logo = await getWithHost(`${server().url}${bitcoin.image.large}`, forgedHost);
  expect(logo.status).toBe(200);
});

test('PUBLIC_BASE_URL must be an http(s) URL without query or fragment', () => {
  for (const bad of ['data.example.com', 'ftp://data.example.com', 'https://data.example.com/?x=1', 'https://data.example.com/#top']) {
    expect(() => testConfig({ PUBLIC_BASE_URL: bad }), bad).toThrow(/PUBLIC_BASE_URL/);
  }
  expect(testConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1:8080/' }).PUBLIC_BASE_URL).toBe('http://127.0.0.1:8080');
});

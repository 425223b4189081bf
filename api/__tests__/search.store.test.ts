import { expect, test } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';

const api = useTestApi({
  keyName: 'search-test',
});

const search = async (q: string) => api.get(`/v1/search?q=${encodeURIComponent(q)}`);

test('exact ticker first, then names that start with the text, then the rest', async () => {
  const body = (await search('BTC')).json as any;
  expect(body.coins[0]).toEqual({ id: 'bitcoin', symbol: 'btc', name: 'Bitcoin' });
  const bit = ((await search('bit')).json as any).coins.map((c: any) => c.id);
  // Both start with "bit"; catalog (rank) order breaks the tie.
  expect(bit.slice(0, 2)).toEqual(['bitcoin', 'bitcoin-cash']);
  expect(((await search('coin')).json as any).coins.map((c: any) => c.id)).toContain('dogecoin');
  // The exact id first, then the venues whose id or name starts with the text.
  const binance = ((await search('binance')).json as any).exchanges;
  expect(binance[0]).toEqual({ id: 'binance', name: 'Binance' });
  expect(binance.map((e: any) => e.id)).toContain('binance-futures');
  expect(binance.every((e: any) => `${e.id} ${e.name}`.toLowerCase().includes('binance'))).toBe(true);
  const defi = ((await search('defi')).json as any).categories;
  expect(defi.length).toBeGreaterThan(0);
  expect(defi.every((c: any) => `${c.id} ${c.name}`.toLowerCase().includes('defi'))).toBe(true);
  expect((await search('zzzz-nothing')).json).toEqual({ coins: [], exchanges: [], categories: [] });
});

test('q is required and bounded', async () => {
  for (const path of ['/v1/search', '/v1/search?q=', `/v1/search?q=${'x'.repeat(65)}`]) {
    const res = await api.get(path);
    expect(res.status, path).toBe(400);
    expect((res.json as any).error.message).toMatch(/\bq\b/);
  }
});

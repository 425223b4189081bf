import { expect, test } from 'vitest';
import { catalogCategories, findAsset } from '../../infra/catalog/catalog.ts';
import { capBefore, closeTo, day, expectedRanking, universeChange, useFixtureApi } from './assetMarketFixture.ts';

const api = useFixtureApi('categories-test');
const ranking = expectedRanking();
const totalCap = ranking.reduce((s, e) => s + e.marketCap, 0);

/** Every catalog category recomputed from the priced assets of the fixture, largest cap first (ties: catalog order). */
const rows = catalogCategories
  .map((c) => {
    const members = ranking.filter((e) => findAsset(e.id)!.categories.includes(c.id));
    const cap = members.reduce((s, e) => s + e.marketCap, 0);
    return {
      id: c.id,
      name: c.name,
      market_cap: cap,
      market_cap_change_24h: universeChange(members, '24h', day),
      market_cap_change_7d: universeChange(members, '7d', 7 * day),
      volume_24h: members.reduce((s, e) => s + e.volume24h, 0),
      dominance: (cap / totalCap) * 100,
      asset_count: members.length,
      top_3_coins: members.slice(0, 3).map((e) => findAsset(e.id)!.image.small),
      top_3_coins_id: members.slice(0, 3).map((e) => e.id),
    };
  })
  .sort((a, b) => b.market_cap - a.market_cap);
const priced = rows.filter((r) => r.asset_count > 0);

test('the fixture covers the cases: several members, top 3 of more, universes that leave members out', () => {
  expect(priced.length).toBeGreaterThan(3);
  expect(rows.length).toBeGreaterThan(priced.length);
  const layer1 = rows.find((r) => r.id === 'layer-1')!;
  expect(layer1.asset_count).toBeGreaterThan(3);
  expect(layer1.top_3_coins_id).toHaveLength(3);
  // solana has a price 24 h ago but not 7 days ago; ethereum neither: smart-contract-platform has no 7 d universe.
  const members = ranking.filter((e) => ['solana', 'ethereum'].includes(e.id));
  expect(members.map((e) => [capBefore(e, '24h', day) !== undefined, capBefore(e, '7d', 7 * day) !== undefined])).toEqual([
    [false, false],
    [true, false],
  ]);
  expect(rows.find((r) => r.id === 'smart-contract-platform')!.market_cap_change_7d).toBe(0);
});

test('GET /v1/categories: the categories with a priced asset, every figure recomputed from the trades', async () => {
  const res = await api.get('/v1/categories');
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('private, max-age=300');
  expect(closeTo(res.json, priced)).toEqual([]);
});

test('all=true adds the categories without a priced asset, with zero figures', async () => {
  const body = (await api.get('/v1/categories?all=true')).json as typeof rows;
  expect(closeTo(body, rows)).toEqual([]);
  expect(body.at(-1)).toMatchObject({ market_cap: 0, asset_count: 0, top_3_coins: [], top_3_coins_id: [] });
});

test('ids: only the listed categories, unknown ids left out', async () => {
  const body = (await api.get('/v1/categories?ids=stablecoins,no-such-category,layer-1,meme')).json as typeof rows;
  expect(body.map((r) => r.id)).toEqual(priced.filter((r) => ['stablecoins', 'layer-1'].includes(r.id)).map((r) => r.id));
  const withAll = (await api.get('/v1/categories?ids=stablecoins,meme&all=true')).json as typeof rows;
  expect(withAll.map((r) => r.id)).toEqual(['stablecoins', 'meme']);
});

test.each([
  ['all=yes', 'all'],
  ['ids=Layer1', 'ids'],
])('400 bad_request for %s naming %s', async (query, name) => {
  const res = await api.get(`/v1/categories?${query}`);
  expect(res.status).toBe(400);
  expect((res.json as { error: { message: string } }).error.message).toContain(name);
});

import { expect, test } from 'vitest';
import { findAsset, supplyAt } from '../../infra/catalog/catalog.ts';
import { buckets, closeTo, day, fixtureTrades, hour, minute, referenceRates, T } from './assetMarketFixture.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';

const api = useTestApi({
  keyName: 'chart-test',
  now: T,
  seed: async (store) => {
    await store.insert('trades', fixtureTrades);
    await store.insert('fx_reference_rates', referenceRates(['eur']));
  },
});

/** Window and bucket of each range, as the spec's "density adapted to the window" is documented. */
const drawn: Record<string, { window: number; size: number }> = {
  '1h': { window: hour, size: minute },
  '24h': { window: day, size: 5 * minute },
  '7d': { window: 7 * day, size: hour },
  '30d': { window: 30 * day, size: 4 * hour },
  '90d': { window: 90 * day, size: 4 * hour },
  '1y': { window: 365 * day, size: day },
};

/** The points recomputed from the trades: the close of every bucket from the one holding the window start. */
function expectedPoints(id: string, range: string, metric: 'price' | 'market_cap', rate: number): [number, number][] {
  let list;
  if (range === 'max') {
    const first = Math.min(...fixtureTrades.filter((t) => t.asset === id && ['USD', 'USDT', 'USDC'].includes(t.quote)).map((t) => t.ts));
    list = buckets(id, T - first > 1_000 * day ? 'week' : day);
  } else {
    const { window, size } = drawn[range]!;
    const from = Math.floor((T - window) / size) * size;
    list = buckets(id, size).filter((b) => b.start >= from);
  }
  const asset = findAsset(id)!;
  return list.filter((b) => b.start <= T).map((b) => [b.start, (metric === 'price' ? b.close : b.close * supplyAt(asset, b.start).circulating) * rate]);
}

interface ChartBody {
  id: string;
  range: string;
  metric: string;
  currency: string;
  coverage: string;
  points: [number, number][];
}

test.each([
  ['bitcoin', '1h', 'full'],
  ['bitcoin', '24h', 'full'],
  ['bitcoin', '7d', 'full'],
  ['bitcoin', '30d', 'full'],
  ['bitcoin', '90d', 'full'],
  ['bitcoin', '1y', 'full'],
  ['bitcoin', 'max', 'full'],
  ['litecoin', 'max', 'full'],
  ['ethereum', '24h', 'partial'],
  ['ethereum', '1h', 'full'],
  ['cardano', '7d', 'partial'],
  ['cardano', '1y', 'partial'],
  ['solana', '30d', 'full'],
])('%s range=%s: the index closes of the window, coverage %s', async (id, range, coverage) => {
  for (const metric of ['price', 'market_cap'] as const) {
    const res = await api.get(`/v1/coins/${id}/chart?range=${range}&metric=${metric}`);
    expect(res.status).toBe(200);
    const body = res.json as ChartBody;
    expect({ ...body, points: [] }).toEqual({ id, range, metric, currency: 'usd', coverage, gaps: [], points: [] });
    expect(closeTo(body.points, expectedPoints(id, range, metric, 1))).toEqual([]);
    expect(body.points.length).toBeGreaterThan(0);
    expect(body.points.length).toBeLessThanOrEqual(1_001);
  }
});

test('the fixture draws what it is meant to: several buckets, weekly points for a long history', async () => {
  expect(expectedPoints('bitcoin', '1y', 'price', 1).length).toBeGreaterThan(5);
  const ltc = ((await api.get('/v1/coins/litecoin/chart?range=max')).json as ChartBody).points;
  // Three trades over 1,200 days: three weekly buckets, each starting on a Monday 00:00 UTC.
  expect(ltc).toHaveLength(3);
  for (const [t] of ltc) expect(new Date(t).toISOString()).toMatch(/T00:00:00\.000Z$/);
  expect(ltc.map(([t]) => new Date(t).getUTCDay())).toEqual([1, 1, 1]);
});

test('defaults: range 24h, metric price, vs usd', async () => {
  const body = (await api.get('/v1/coins/bitcoin/chart')).json as ChartBody;
  expect(body).toMatchObject({ range: '24h', metric: 'price', currency: 'usd' });
  expect(body.points).toEqual(expectedPoints('bitcoin', '24h', 'price', 1));
});

test('vs converts each point at the reference rate of its own day', async () => {
  // referenceRates: eur 0.875 from 40 days before T's day, 0.9 from T's day on; no venue trades EUR and USD legs together.
  const dayOfT = Math.floor(T / day) * day;
  const body = (await api.get('/v1/coins/bitcoin/chart?range=7d&metric=market_cap&vs=eur')).json as ChartBody & { rates: unknown };
  expect(body.currency).toBe('eur');
  const usd = expectedPoints('bitcoin', '7d', 'market_cap', 1);
  expect(usd.some(([t]) => t < dayOfT) && usd.some(([t]) => t >= dayOfT)).toBe(true);
  expect(closeTo(body.points, usd.map(([t, v]) => [t, v * (t >= dayOfT ? 0.9 : 0.875)]))).toEqual([]);
  const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
  expect(body.rates).toEqual([
    { since: usd[0]![0], rate: 0.875, source: `reference:test ${dayOf(T - 40 * day)}` },
    { since: usd.find(([t]) => t >= dayOfT)![0], rate: 0.9, source: `reference:test ${dayOf(T)}` },
  ]);
});

test('an asset with no index trade: no points, partial', async () => {
  const body = (await api.get('/v1/coins/dogecoin/chart?range=max')).json as ChartBody;
  expect(body).toEqual({ id: 'dogecoin', range: 'max', metric: 'price', currency: 'usd', coverage: 'partial', gaps: [], points: [] });
});

test.each([
  ['range=2d', 400, 'range'],
  ['range=', 400, 'range'],
  ['metric=volume', 400, 'metric'],
  ['vs=xyz', 400, 'vs'],
])('%s: %i naming %s', async (query, status, name) => {
  const res = await api.get(`/v1/coins/bitcoin/chart?${query}`);
  expect(res.status).toBe(status);
  const { error } = res.json as { error: { code: string; message: string } };
  expect(error.code).toBe('bad_request');
  expect(error.message).toContain(name);
});

test('503 naming the currency when no rate is known for vs', async () => {
  const res = await api.get('/v1/coins/bitcoin/chart?vs=jpy');
  expect(res.status).toBe(503);
  expect((res.json as { error: { code: string; message: string } }).error).toMatchObject({ code: 'unavailable', message: expect.stringContaining('jpy') });
});

test('404 not_found for an unknown id', async () => {
  const res = await api.get('/v1/coins/no-such-coin/chart');
  expect(res.status).toBe(404);
  expect((res.json as { error: { code: string } }).error.code).toBe('not_found');
});

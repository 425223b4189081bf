import { expect, test, vi } from 'vitest';
import { catalogAssets, findAsset } from '../../infra/catalog/catalog.ts';
import { loadAssetMarkets } from '../read/assetMarket.ts';
import { buckets, day, expected, expectedRanking, fixtureTrades, hour, T, type Expected } from './assetMarketFixture.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, testConfig } from '../../test/support/harness.ts';

/** The API's config (the defaults), read by the expected rows below. */
const config = testConfig();
const iso = (ms: number) => new Date(ms).toISOString();

// Every window is computed from Date.now(): fixed at T.
const api = useTestApi({
  keyName: 'coins-test',
  now: T,
  seed: async (store) => {
    // Several blocks, so the sums and states arrive as separate parts to merge.
    for (let i = 0; i < fixtureTrades.length; i += 9) await store.insert('trades', fixtureTrades.slice(i, i + 9));
    await computeIndex(store, T);
  },
});

/** The coin row (spec 2.1) of a priced asset, from the independent recomputation. */
function expectedRow(e: Expected, rank: number) {
  const asset = findAsset(e.id)!;
  return {
    id: e.id,
    symbol: asset.symbol,
    name: asset.name,
    image: asset.image.large,
    current_price: e.price,
    market_cap: e.marketCap,
    fully_diluted_valuation: e.fdv,
    total_volume: e.volume24h,
    high_24h: e.high24h,
    low_24h: e.low24h,
    market_cap_rank: rank,
    price_change_percentage_1h_in_currency: e.change['1h'],
    price_change_percentage_24h_in_currency: e.change['24h'],
    price_change_percentage_7d_in_currency: e.change['7d'],
    price_change_percentage_30d_in_currency: e.change['30d'],
    circulating_supply: e.circulating,
    total_supply: e.total,
    max_supply: e.max,
    measured: T - e.updatedAt <= config.INDEX_STALE_AFTER_MS,
    ath: e.ath.price,
    ath_change_percentage: (e.price / e.ath.price - 1) * 100,
    atl: e.atl.price,
    atl_change_percentage: (e.price / e.atl.price - 1) * 100,
    ath_date: iso(e.ath.at),
  };
}

const ranking = expectedRanking();
const rows = ranking.map((e, i) => expectedRow(e, i + 1));

/** 168 hourly closes ending with the current hour; an hour without trades repeats the close before it (up to 7 days back). */
function expectedSparkline(id: string): number[] {
  const currentHour = Math.floor(T / hour) * hour;
  const first = currentHour - 167 * hour;
  const closes = buckets(id, hour).filter((b) => b.start >= first - 7 * day);
  const out: number[] = [];
  for (let h = first; h <= currentHour; h += hour) {
    const last = closes.filter((b) => b.start <= h).at(-1);
    if (last) out.push(last.close);
  }
  return out;
}

interface CoinsBody {
  coins: (ReturnType<typeof expectedRow> & { sparkline_in_7d?: { price: number[] } })[];
  page: number;
  limit: number;
  offset: number;
  at: string;
}

test('the fixture covers the cases it is meant to', () => {
  const ids = ranking.map((e) => e.id);
  // Priced: bitcoin, ethereum (listed 2 h ago), solana (no trade in 24 h), tether, litecoin. Not priced: cardano (3 days), dogecoin (EUR only).
  expect([...ids].sort()).toEqual(['bitcoin', 'ethereum', 'litecoin', 'solana', 'tether']);
  const btc = expected('bitcoin')!;
  // The index price (aggregate/METHODOLOGY.md): the latest trades of the three USD-valued markets, weighted by their 24 h volume.
  expect(btc.price).toBeGreaterThan(99_990.75);
  expect(btc.price).toBeLessThan(100_010.5);
  expect(btc.reference['7d'].price).toBe(80_000.5);
  expect(btc.reference['1y'].price).toBe((30_000.25 * 0.5 + 30_100.75 * 1.5) / 2);
  expect(btc.ath).toEqual({ price: 150_000, at: T - 10 * day });
  expect(btc.high24h).toBe(101_000.75);
  expect(btc.low24h).toBe(98_000.25);
  const sol = expected('solana')!;
  expect([sol.high24h, sol.low24h, sol.change['24h']]).toEqual([150.25, 150.25, 0]);
  expect(sol.reference['1y'].price).toBe(140);
});

test('GET /v1/coins: the priced assets in rank order, every figure recomputed from the trades', async () => {
  const res = await api.get('/v1/coins');
  expect(res.status).toBe(200);
  const body = res.json as CoinsBody;
  expect(body).toEqual({ coins: rows, page: 1, limit: 100, offset: 0, at: iso(T) });
  // Measured: a print at most 60 s old (bitcoin 3 s, tether 5 s); ethereum 10 min, litecoin 20 h, solana 30 h are not.
  expect(body.coins.filter((c) => c.measured).map((c) => c.id).sort()).toEqual(['bitcoin', 'tether']);
  expect(res.headers.get('cache-control')).toBe('private, max-age=30');
});

test('the 24 h change agrees with /v1/prices', async () => {
  const prices = (await api.get('/v1/prices')).json as { prices: { assetId: string; change24h: number; price: number }[] };
  const coins = ((await api.get('/v1/coins')).json as CoinsBody).coins;
  for (const c of coins) {
    const p = prices.prices.find((x) => x.assetId === c.id)!;
    expect([c.current_price, c.price_change_percentage_24h_in_currency]).toEqual([p.price, p.change24h]);
  }
});

test('loadAssetMarkets: every catalog asset, priced ones by market cap, then the rest in catalog order', async () => {
  const markets = await loadAssetMarkets(api.store, T);
  expect(markets).toHaveLength(catalogAssets.length);
  expect(markets.map((m) => m.rank)).toEqual(markets.map((_, i) => i + 1));
  expect(markets.slice(0, ranking.length).map((m) => m.asset.id)).toEqual(ranking.map((e) => e.id));
  const unpriced = markets.slice(ranking.length);
  expect(unpriced.map((m) => m.asset.id)).toEqual(catalogAssets.map((a) => a.id).filter((id) => !ranking.some((e) => e.id === id)));
  expect(unpriced.every((m) => m.price === null && m.marketCap === null && m.change['24h'] === null)).toBe(true);
  // cardano has no price now, but its history is known.
  const ada = markets.find((m) => m.asset.id === 'cardano')!;
  expect([ada.observedSince, ada.ath, ada.atl]).toEqual([T - 3 * day, { price: 0.5, at: T - 3 * day }, { price: 0.5, at: T - 3 * day }]);
  for (const e of ranking) {
    const m = markets.find((x) => x.asset.id === e.id)!;
    expect({ reference: m.reference, change: m.change, ranges: m.ranges, marketCapChange24h: m.marketCapChange24h, observedSince: m.observedSince }).toEqual({
      reference: e.reference,
      change: e.change,
      ranges: e.ranges,
      marketCapChange24h: e.marketCapChange24h,
      observedSince: e.observedSince,
    });
  }
});

test('pagination: limit and page, offset wins over page, the page echoed is the one the offset falls on', async () => {
  const page2 = (await api.get('/v1/coins?limit=2&page=2')).json as CoinsBody;
  expect(page2).toMatchObject({ page: 2, limit: 2, offset: 2 });
  expect(page2.coins).toEqual(rows.slice(2, 4));

  const offset = (await api.get('/v1/coins?limit=2&page=3&offset=1')).json as CoinsBody;
  expect(offset).toMatchObject({ page: 1, limit: 2, offset: 1 });
  expect(offset.coins).toEqual(rows.slice(1, 3));

  const beyond = (await api.get('/v1/coins?page=9')).json as CoinsBody;
  expect(beyond).toMatchObject({ coins: [], page: 9, limit: 100, offset: 800 });

  const max = await api.get('/v1/coins?limit=250');
  expect(max.status).toBe(200);
});

test.each([
  ['limit=0', 'limit', '1 to 250'],
  ['limit=251', 'limit', '1 to 250'],
  ['limit=2.5', 'limit', 'integer'],
  ['limit=ten', 'limit', 'integer'],
  ['page=0', 'page', '1 or more'],
  ['offset=-1', 'offset', '0 or more'],
  ['ids=BTC', 'ids', 'lowercase slug'],
  ['ids=', 'ids', 'at least one'],
  ['sparkline=1', 'sparkline', 'true or false'],
])('400 bad_request for %s, naming %s', async (query, name, hint) => {
  const res = await api.get(`/v1/coins?${query}`);
  expect(res.status).toBe(400);
  const { error } = res.json as { error: { code: string; message: string; status: number } };
  expect(error).toMatchObject({ code: 'bad_request', status: 400 });
  expect(error.message).toContain(name);
  expect(error.message).toContain(hint);
});

test('ids: unknown and unpriced ids left out, rank order kept, paging over the listed ids', async () => {
  const listed = ['ethereum', 'no-such-coin', 'bitcoin', 'cardano', 'dogecoin', 'ethereum'];
  const wanted = rows.filter((r) => listed.includes(r.id));
  expect(wanted.map((r) => r.id).sort()).toEqual(['bitcoin', 'ethereum']);

  const all = (await api.get(`/v1/coins?ids=${listed.join(',')}`)).json as CoinsBody;
  expect(all.coins).toEqual(wanted);

  const second = (await api.get(`/v1/coins?ids=${listed.join(',')}&limit=1&page=2`)).json as CoinsBody;
  expect(second).toMatchObject({ page: 2, limit: 1, offset: 1 });
  expect(second.coins).toEqual(wanted.slice(1));

  const none = (await api.get('/v1/coins?ids=no-such-coin,cardano')).json as CoinsBody;
  expect(none.coins).toEqual([]);
});

test('sparkline=true adds 168 hourly closes, oldest first, carried over hours without trades', async () => {
  const body = (await api.get('/v1/coins?sparkline=true')).json as CoinsBody;
  expect(body.coins.map(({ sparkline_in_7d: _, ...row }) => row)).toEqual(rows);
  for (const coin of body.coins) expect(coin.sparkline_in_7d, coin.id).toEqual({ price: expectedSparkline(coin.id) });
  // tether's trade 8 days ago, before the first hour, carries into it and on until its next trade 26 h ago;
  // ethereum, listed 2 h ago, has 3 hours.
  const usdt = body.coins.find((c) => c.id === 'tether')!.sparkline_in_7d!.price;
  expect([usdt.length, usdt[0], usdt.at(-1)]).toEqual([168, 1.000244140625, 1]);
  expect(body.coins.find((c) => c.id === 'bitcoin')!.sparkline_in_7d!.price).toHaveLength(168);
  expect(body.coins.find((c) => c.id === 'ethereum')!.sparkline_in_7d!.price).toEqual([3_001, 3_001, 3_100.25]);

  const without = (await api.get('/v1/coins?sparkline=false')).json as CoinsBody;
  expect(without.coins.every((c) => !('sparkline_in_7d' in c))).toBe(true);
});

// Last: it closes the store.
test('503 unavailable when the store cannot answer', async () => {
  // Past the shared snapshot's lifetime, so the request needs the store.
  vi.setSystemTime(T + 60_000);
  await api.store.close();
  const res = await api.get('/v1/coins?limit=7');
  expect(res.status).toBe(503);
  expect(res.json).toEqual({ error: { code: 'unavailable', message: expect.stringContaining('retry'), status: 503 } });
});

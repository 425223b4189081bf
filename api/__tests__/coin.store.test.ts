import { beforeAll, expect, test } from 'vitest';
import { findAsset, findCategory } from '../../infra/catalog/catalog.ts';
import { closeTo, day, expected, expectedRanking, fixtureTrades, referenceRates, T, useFixtureApi } from './assetMarketFixture.ts';
import { fiatPerUsd } from '../../test/support/fxReference.ts';
import { openApiValidators } from '../../test/support/openapi.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const valueKeys = ['usd', 'ars', 'brl', 'sek'] as const;
/** The FX reference rows stored: the profile's rates are recomputed from them (test/support/fxReference.ts). */
const fxCurrencies = ['ars', 'brl', 'sek'];
const fxRows = referenceRates(fxCurrencies);
const dateKeys = ['usd', 'ars', 'brl', 'sek', 'sgd', 'thb', 'try', 'twd', 'uah', 'vnd', 'zar', 'eth', 'aed', 'aud', 'bdt', 'cad', 'chf', 'clp', 'cny', 'czk', 'dkk', 'eur', 'gbp', 'hkd'];

const api = useFixtureApi('coin-test', fxCurrencies);
// The reference recomputation takes seconds of CPU: done (and cached) before the first request, so no
// request is sent on a keep-alive socket whose idle timeout fired while the event loop was busy.
beforeAll(() => void expectedRanking());

/** The profile (spec 2.2) recomputed from the trades, the catalog and the FX rates at T and at each reference time. */
function expectedProfile(id: string) {
  const e = expected(id)!;
  const asset = findAsset(id)!;
  const rateAt = (c: (typeof valueKeys)[number], at: number) => fiatPerUsd(fixtureTrades, fxRows, c, at);
  const rate = (c: (typeof valueKeys)[number]) => rateAt(c, T)!;
  const map = (usd: number) => Object.fromEntries(valueKeys.map((c) => [c, usd * rate(c)]));
  const same = (v: number) => Object.fromEntries(valueKeys.map((c) => [c, v]));
  const dates = (ms: number) => Object.fromEntries(dateKeys.map((c) => [c, iso(ms)]));
  const changes: Record<string, Record<string, number>> = {};
  for (const [w, ref] of Object.entries(e.reference)) {
    changes[`price_change_percentage_${w}_in_currency`] = Object.fromEntries(
      valueKeys.map((c) => [c, ((e.price * rate(c)) / (ref.price * (rateAt(c, ref.at) ?? rate(c))) - 1) * 100]),
    );
  }
  return {
    id,
    symbol: asset.symbol,
    name: asset.name,
    categories: asset.categories.map((c) => findCategory(c)!.name),
    description: { en: asset.description },
    image: asset.image,
    links: asset.links,
    platforms: Object.fromEntries(Object.entries(asset.platforms).map(([p, v]) => [p, v.contract_address])),
    detail_platforms: Object.fromEntries(
      Object.entries(asset.platforms).map(([p, v]) => [p, { decimal_place: v.decimal_place === null ? null : String(v.decimal_place), contract_address: v.contract_address }]),
    ),
    hashing_algorithm: asset.hashing_algorithm ?? '',
    genesis_date: asset.genesis_date ?? '',
    market_cap_rank: expectedRanking().findIndex((x) => x.id === id) + 1,
    watchlist_portfolio_users: 0,
    price_source: 'mds:index (volume-weighted trades on USD, USDT and USDC markets)',
    price_stats: {
      observed_since: iso(e.observedSince),
      ranges: (['24h', '7d', '30d', '1y'] as const).map((w) => ({
        key: w,
        label: { '24h': '24 hours', '7d': '7 days', '30d': '30 days', '1y': '1 year' }[w],
        low: map(e.ranges[w].low),
        high: map(e.ranges[w].high),
      })),
      high_all: map(e.ath.price),
      low_all: map(e.atl.price),
      high_all_at: iso(e.ath.at),
      low_all_at: iso(e.atl.at),
    },
    market_data: {
      current_price: map(e.price),
      market_cap: map(e.marketCap),
      fully_diluted_valuation: map(e.fdv),
      total_volume: map(e.volume24h),
      high_24h: map(e.high24h),
      low_24h: map(e.low24h),
      ...changes,
      ath: map(e.ath.price),
      ath_change_percentage: same((e.price / e.ath.price - 1) * 100),
      atl: map(e.atl.price),
      atl_change_percentage: same((e.price / e.atl.price - 1) * 100),
      ath_date: dates(e.ath.at),
      atl_date: dates(e.atl.at),
      circulating_supply: e.circulating,
      total_supply: e.total,
      max_supply: e.max,
      supply_source: e.supplySource,
      market_cap_change_percentage_24h: e.marketCapChange24h,
    },
  };
}

test.each(['bitcoin', 'ethereum', 'tether', 'solana'])('GET /v1/coins/%s: the profile, every figure recomputed', async (id) => {
  const res = await api.get(`/v1/coins/${id}`);
  expect(res.status).toBe(200);
  expect(closeTo(res.json, expectedProfile(id))).toEqual([]);
});

test('the fixture exercises the profile: token platforms, in-currency changes at the rate of their time', async () => {
  const usdt = (await api.get('/v1/coins/tether')).json as any;
  expect(Object.keys(usdt.platforms).length).toBeGreaterThan(0);
  expect(usdt.hashing_algorithm).toBe('');

  const btc = (await api.get('/v1/coins/bitcoin')).json as any;
  const md = btc.market_data;
  // 7 d ago the ARS rate was the older one: the ARS change differs from the USD change ...
  expect(md.price_change_percentage_7d_in_currency.ars).not.toBeCloseTo(md.price_change_percentage_7d_in_currency.usd, 6);
  // ... a year ago no rate is known: the current rate stands in, so it equals the USD change.
  expect(md.price_change_percentage_1y_in_currency.ars).toBeCloseTo(md.price_change_percentage_1y_in_currency.usd, 9);
  expect(btc.price_stats.high_all_at).toBe(iso(T - 10 * day));
  expect(btc.price_stats.observed_since).toBe(iso(T - 400 * day));
  expect(btc.price_stats.ranges[0].high).toEqual(md.high_24h);
  expect(Object.keys(md.ath_date)).toHaveLength(24);

  const coins = (await api.get('/v1/coins?ids=bitcoin,ethereum,tether')).json as any;
  for (const c of coins.coins) {
    const profile = (await api.get(`/v1/coins/${c.id}`)).json as any;
    expect([profile.market_cap_rank, profile.market_data.current_price.usd, profile.market_data.price_change_percentage_24h_in_currency.usd]).toEqual([
      c.market_cap_rank,
      c.current_price,
      c.price_change_percentage_24h_in_currency,
    ]);
  }
});

// openapi.store.test.ts has no FX rates, so there the profile is a 503: its 200 is checked against the document here.
test('the profiles match the OpenAPI document', async () => {
  const doc = (await api.getWithoutKey('/v1/openapi.json')).json as any;
  const validate = openApiValidators(doc).response('/v1/coins/{id}', 200);
  for (const id of ['bitcoin', 'ethereum', 'tether']) {
    const body = (await api.get(`/v1/coins/${id}`)).json;
    expect(validate(body), `${id}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }
});

test('404 not_found for an unknown id', async () => {
  const res = await api.get('/v1/coins/no-such-coin');
  expect(res.status).toBe(404);
  expect(res.json).toEqual({ error: { code: 'not_found', message: expect.stringContaining('no-such-coin'), status: 404 } });
});

test.each(['cardano', 'dogecoin', 'ripple'])('503 unavailable for %s, a catalog asset with no index price (never a made-up number)', async (id) => {
  const res = await api.get(`/v1/coins/${id}`);
  expect(res.status).toBe(503);
  expect(res.json).toEqual({ error: { code: 'unavailable', message: expect.stringContaining(`no index price for ${id}`), status: 503 } });
});

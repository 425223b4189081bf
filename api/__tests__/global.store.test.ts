import { expect, test, vi } from 'vitest';
import { findAsset } from '../../infra/catalog/catalog.ts';
import { capBefore, close, closeTo, day, expectedRanking, fixtureTrades, minute, referenceRates, T, universeChange, useFixtureApi } from './assetMarketFixture.ts';
import { fiatPerUsd } from '../../test/support/fxReference.ts';

// No SEK rate: sek is left out of the totals (and the coin profile, whose maps need it, answers 503).
const fxCurrencies = ['ars', 'brl'];
const fxRows = referenceRates(fxCurrencies);

const api = useFixtureApi('global-test', fxCurrencies);

test('GET /v1/global: totals, dominance and the 24 h change over one fixed universe, recomputed from the trades', async () => {
  const res = await api.get('/v1/global');
  expect(res.status).toBe(200);
  const ranking = expectedRanking();
  const totalCap = ranking.reduce((s, e) => s + e.marketCap, 0);
  const totalVolume = ranking.reduce((s, e) => s + e.volume24h, 0);
  // The rates at T, recomputed from the stored reference rows and trades.
  const perCurrency = (usd: number) => Object.fromEntries(['usd', 'ars', 'brl'].map((c) => [c, usd * fiatPerUsd(fixtureTrades, fxRows, c, T)!]));
  // Markets: venue and symbol, any quote, with a trade in a 1-minute bucket starting in the last 24 h.
  const from = Math.floor(T / 1000 - 86_400) * 1000;
  const markets = new Set(fixtureTrades.filter((t) => Math.floor(t.ts / minute) * minute >= from && t.ts <= T).map((t) => `${t.venue}|${t.market}`));
  const wanted = {
    active_cryptocurrencies: ranking.length,
    markets: markets.size,
    total_market_cap: perCurrency(totalCap),
    total_volume: perCurrency(totalVolume),
    market_cap_percentage: Object.fromEntries(ranking.slice(0, 10).map((e) => [findAsset(e.id)!.symbol, (e.marketCap / totalCap) * 100])),
    market_cap_change_percentage_24h_usd: universeChange(ranking, '24h', day),
  };
  expect(closeTo(res.json, wanted)).toEqual([]);
  expect(res.headers.get('cache-control')).toBe('private, max-age=30');

  // The fixture: ethereum (listed 2 h ago) and litecoin (no trade in the 48 h before its trade 20 h ago) are outside
  // the universe; over every asset the change would differ.
  expect(ranking.filter((e) => capBefore(e, '24h', day) === undefined).map((e) => e.id).sort()).toEqual(['ethereum', 'litecoin']);
  expect(markets.size).toBe(8);
  const naive = (totalCap / ranking.reduce((s, e) => s + e.reference['24h'].price * (e.marketCap / e.price), 0) - 1) * 100;
  expect(close(wanted.market_cap_change_percentage_24h_usd, naive, 1e-6)).toBe(false);
});

test('a value currency without a rate: the coin profile answers 503 naming it', async () => {
  const res = await api.get('/v1/coins/bitcoin');
  expect(res.status).toBe(503);
  expect((res.json as { error: { code: string; message: string } }).error).toMatchObject({ code: 'unavailable', message: expect.stringContaining('sek') });
});

// Last: it closes the store.
test('the last figures, marked stale, when the store cannot answer', async () => {
  const fresh = await api.get('/v1/global');
  vi.setSystemTime(T + 60_000);
  await api.store.close();
  const res = await api.get('/v1/global');
  expect(res.status).toBe(200);
  expect(res.text).toBe(fresh.text);
  expect(res.headers.get('x-data-stale')).toBe('60');
});

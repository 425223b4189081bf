// Discovered assets (infra/catalog/discovered.ts) served as catalog assets are: prices, coin rows,
// the coin's page, its markets, search and its logo; what nobody knows (supply) said plainly.
import { describe, expect, it } from 'vitest';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import { referenceTicks } from '../../aggregate/__tests__/indexReference.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, trade, type TradeRow } from '../../test/support/harness.ts';

const T = Date.now();
const nowSecond = Math.floor(T / 1000);

/** `n` trades a second apart up to 3 s ago, of one market. */
function prints(venue: string, market: string, asset: string, quote: string, price: number, quantity: number, n = 5): TradeRow[] {
  return Array.from({ length: n }, (_, i) =>
    trade({ venue, market, asset, quote, trade_id: `${market}-${i}`, ts: (nowSecond - 3 - i) * 1000 + 100, price, quantity }),
  );
}

// notacoin first traded before newtoken (listing order), but newtoken carries more volume (rank order).
const trades: TradeRow[] = [
  ...prints('binance', 'BTCUSDT', 'bitcoin', 'USDT', 100_000, 0.5),
  trade({ venue: 'binance', market: 'NOTACOINUSDT', asset: 'notacoin--binance', quote: 'USDT', trade_id: 'first', ts: (nowSecond - 600) * 1000, price: 0.25, quantity: 8 }),
  ...prints('binance', 'NOTACOINUSDT', 'notacoin--binance', 'USDT', 0.25, 1_000),
  ...prints('kraken', 'NEWTOKENUSD', 'newtoken--kraken', 'USD', 2, 50_000),
];

const computedAt = T + 2_500;
const lastSecond = Math.floor((computedAt - defaultIndexSchedule.lagMs) / 1000) - 1;
/** The index price of the last computed second, recomputed from the trades. */
const indexPrice = (asset: string) => referenceTicks(trades, asset, nowSecond - 3600, lastSecond, { params: defaultIndexParams }).at(-1)!.price;
/** USD volume of the last 24 h, from the trades (all quoted in USD or USDT here, rates near 1 are not what this checks). */
const usdVolume = (asset: string) => trades.filter((t) => t.asset === asset).reduce((sum, t) => sum + t.price * t.quantity, 0);

describe('discovered assets', () => {
  const api = useTestApi({
    keyName: 'discovered-test',
    seed: async (store) => {
      await store.insert('trades', trades);
      await computeIndex(store, computedAt);
      // oldcoin on gate was joined into newtoken on kraken (aggregate/jobs/identityJoins.ts): its id is an alias.
      await store.insert('asset_aliases', [{ alias: 'oldcoin--gate', target: 'newtoken--kraken', venue: 'gate', ticker: 'OLDCOIN', scale: 1, trades_moved: 0, liquidations_moved: 0, joined_at: T }]);
      // The coin page values every figure in the currencies the test config serves: their rates of today.
      const today = new Date(T).toISOString().slice(0, 10);
      await store.insert('fx_reference_rates', Object.entries({ ars: 1_200.5, brl: 5.25, sek: 10.5 }).map(([currency, per_usd]) => ({ date: today, currency, per_usd, source: 'test', imported_at: T })));
    },
  });

  it('/v1/prices lists them after the catalog assets, in order of first print, priced from their trades', async () => {
    const body = (await api.get('/v1/prices')).json as { prices: { assetId: string; symbol: string; price: number }[] };
    expect(body.prices.map((p) => [p.assetId, p.symbol])).toEqual([
      ['bitcoin', 'btc'],
      ['notacoin--binance', 'notacoin'],
      ['newtoken--kraken', 'newtoken'],
    ]);
    expect(body.prices[1]!.price).toBeCloseTo(indexPrice('notacoin--binance'), 12);
    expect(body.prices[2]!.price).toBeCloseTo(indexPrice('newtoken--kraken'), 12);
    // Asked by id: an id of the discovered form whose asset never traded, or of a venue we do not track, names nothing.
    const listed = (await api.get('/v1/prices?ids=newtoken--kraken,nevertraded--binance,notacoin--nowhere')).json as { prices: { assetId: string }[] };
    expect(listed.prices.map((p) => p.assetId)).toEqual(['newtoken--kraken']);
  });

  it('/v1/coins: market cap 0 and unknown supply, ranked after every asset whose supply is known, by 24 h volume', async () => {
    const body = (await api.get('/v1/coins')).json as { coins: Record<string, unknown>[] };
    expect(usdVolume('newtoken--kraken')).toBeGreaterThan(usdVolume('notacoin--binance'));
    expect(body.coins.map((c) => [c.id, c.market_cap_rank])).toEqual([
      ['bitcoin', 1],
      ['newtoken--kraken', 2],
      ['notacoin--binance', 3],
    ]);
    const notacoin = body.coins[2]!;
    expect(notacoin).toMatchObject({ symbol: 'notacoin', name: 'NOTACOIN', market_cap: 0, fully_diluted_valuation: 0, circulating_supply: 0, total_supply: 0, max_supply: null });
    expect(notacoin.image).toMatch(/\/assets\/coins\/notacoin--binance\.svg\?size=large$/);
    expect(notacoin.total_volume).toBeCloseTo(usdVolume('notacoin--binance'), 6);
    expect(body.coins[0]!.market_cap).toBeGreaterThan(0);
  });

  it('/v1/coins/{id}: its page says the supply is unknown; ids of no traded asset are 404', async () => {
    const res = await api.get('/v1/coins/notacoin--binance');
    expect(res.status, res.text).toBe(200);
    const coin = res.json as Record<string, unknown> & { market_data: Record<string, unknown> };
    expect(coin).toMatchObject({ id: 'notacoin--binance', symbol: 'notacoin', name: 'NOTACOIN', categories: [] });
    expect(coin.market_data).toMatchObject({ circulating_supply: 0, total_supply: 0, max_supply: null, supply_source: 'unknown' });
    for (const id of ['nevertraded--binance', 'notacoin--nowhere', 'notacoin']) expect((await api.get(`/v1/coins/${id}`)).status, id).toBe(404);
    expect((await api.get('/v1/coins/nevertraded--binance/markets')).status).toBe(404);
    expect((await api.get('/v1/coins/nevertraded--binance/ohlc')).status).toBe(404);
    expect((await api.get('/v1/coins/nevertraded--binance/chart')).status).toBe(404);
  });

  it('its markets, its candles, search and its logo', async () => {
    const markets = (await api.get('/v1/coins/notacoin--binance/markets')).json as { markets: { venueId: string; pair: string }[] };
    expect(markets.markets.map((m) => [m.venueId, m.pair])).toEqual([['binance', 'NOTACOIN/USDT']]);
    expect((await api.get('/v1/coins/newtoken--kraken/ohlc')).status).toBe(200);
    const search = (await api.get('/v1/search?q=newtoken')).json as { coins: { id: string }[] };
    expect(search.coins.map((c) => c.id)).toEqual(['newtoken--kraken']);
    const logo = await fetch(`${api.url}/assets/coins/notacoin--binance.svg?size=small`);
    expect(logo.status).toBe(200);
    expect(await logo.text()).toContain('>NOTACOIN</text>');
    expect((await fetch(`${api.url}/assets/coins/notacoin--nowhere.svg`)).status).toBe(404);
  });

  it('an alias answers for the asset it joined, and is not listed itself', async () => {
    const coin = await api.get('/v1/coins/oldcoin--gate/markets');
    expect(coin.status).toBe(200);
    expect((coin.json as { markets: { venueId: string; pair: string }[] }).markets.map((m) => [m.venueId, m.pair])).toEqual([['kraken', 'NEWTOKEN/USD']]);
    const chart = (await api.get('/v1/coins/oldcoin--gate/chart')).json as { id: string };
    expect(chart.id).toBe('newtoken--kraken');
    const prices = (await api.get('/v1/prices')).json as { prices: { assetId: string }[] };
    expect(prices.prices.map((p) => p.assetId)).not.toContain('oldcoin--gate');
  });
});

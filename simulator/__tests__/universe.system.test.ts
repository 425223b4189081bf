// The universe served: the venues' own listing endpoints (read over HTTP, as a collector reads them)
// list the synthetic markets in their formats and with their names, per-1000 listings price 1000
// units, markets list and delist on schedule and on command, and the long tail trades at its low rates.
import { afterEach, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { assetIdForVenueTicker } from '../../infra/catalog/catalog.ts';
import { until, untilValue } from '../../test/support/until.ts';
import { coinbase } from '../../ingest/venues/coinbase.ts';
import { kucoin } from '../../ingest/venues/kucoin.ts';
import { gate } from '../../ingest/venues/gate.ts';
import { venueIo } from '../../ingest/venueIo.ts';
import { simulatedContract } from '../market.ts';
import { startSimulator, type SimulatedVenueId, type Simulator } from '../simulator.ts';
import type { UniverseOptions } from '../universe.ts';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const venues: SimulatedVenueId[] = ['binance', 'gate', 'bybit-linear', 'coinbase'];
const start = (universe: UniverseOptions) => startSimulator({ seed: 21, venues, tickers: ['BTC', 'SHIB'], universe });

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  return (await res.json()) as T;
}

/** The symbols each venue's listing endpoint answers now, and the names where it gives them. */
async function listed(s: Simulator, venue: SimulatedVenueId): Promise<Map<string, { base: string; name?: string }>> {
  const rest = s.endpoints(venue).rest;
  if (venue === 'binance') {
    const info = await getJson<{ symbols: { symbol: string; baseAsset: string }[] }>(`${rest}/api/v3/exchangeInfo`);
    return new Map(info.symbols.map((m) => [m.symbol, { base: m.baseAsset }]));
  }
  if (venue === 'gate') {
    const pairs = await getJson<{ id: string; base: string; base_name: string }[]>(`${rest}/api/v4/spot/currency_pairs`);
    return new Map(pairs.map((p) => [p.id, { base: p.base, name: p.base_name }]));
  }
  if (venue === 'coinbase') {
    const body = await getJson<{ products: { product_id: string; base_currency_id: string; base_name: string }[] }>(`${rest}/api/v3/brokerage/market/products`);
    return new Map(body.products.map((p) => [p.product_id, { base: p.base_currency_id, name: p.base_name }]));
  }
  // Bybit pages its linear instruments: followed by cursor, 20 a page.
  const out = new Map<string, { base: string }>();
  let cursor = '';
  let pages = 0;
  do {
    const page = await getJson<{ result: { list: { symbol: string; baseCoin: string }[]; nextPageCursor: string } }>(
      `${rest}/v5/market/instruments-info?category=linear&limit=20${cursor ? `&cursor=${cursor}` : ''}`,
    );
    for (const i of page.result.list) out.set(i.symbol, { base: i.baseCoin });
    cursor = page.result.nextPageCursor;
    pages += 1;
  } while (cursor);
  expect(pages).toBeGreaterThan(1);
  return out;
}

const catalogMarkets: Record<string, string[]> = {
  binance: ['BTCUSDT', 'SHIBUSDT', 'ETHBTC'],
  gate: ['BTC_USDT', 'SHIB_USDT', 'ETH_BTC'],
  'bybit-linear': ['BTCUSDT', 'SHIBUSDT', '1000PEPEUSDT', 'SHIB1000USDT'],
  coinbase: ['BTC-USD', 'SHIB-USD', 'ETH-BTC'],
};

describe('the universe on the venues\' listing endpoints', () => {
  test('every market of the plan listed at start, in the venue\'s format and with its names, besides the catalog\'s', async () => {
    sim = await start({ assets: 300, listingsEveryMs: 1e9, delistingsEveryMs: 1e9 });
    const universe = sim.universe!;
    const names = new Map(universe.assets.map((a) => [a.key, a.name]));
    for (const venue of venues) {
      const answer = await listed(sim, venue);
      const planned = universe.markets.filter((m) => m.venue === venue && m.listAt === 0);
      expect(planned.length, venue).toBeGreaterThan(10);
      const synthetic = [...answer.keys()].filter((s) => universe.truth(venue, s)?.synthetic);
      expect(new Set(synthetic)).toEqual(new Set(planned.filter((m) => m.assetKey.startsWith('sim:')).map((m) => m.spec.symbol)));
      expect(new Set([...answer.keys()].filter((s) => !synthetic.includes(s)))).toEqual(new Set(catalogMarkets[venue]));
      for (const m of planned) {
        const got = answer.get(m.spec.symbol)!;
        expect(got.base).toBe(m.spec.base);
        // Gate and Coinbase publish the asset's full name with the pair.
        if (venue === 'gate' || venue === 'coinbase') expect(got.name).toBe(names.get(m.assetKey));
      }
    }
    expect((await listed(sim, 'gate')).get('BTC_USDT')?.name).toBe('Bitcoin');
  });

  test('names where the venue publishes them: Bitfinex\'s label map, KuCoin\'s currencies, Bitstamp\'s pair descriptions; contracts in KuCoin\'s, Coinbase\'s and Gate\'s currencies', async () => {
    sim = await startSimulator({ seed: 22, venues: ['bitfinex', 'kucoin', 'bitstamp', 'coinbase', 'gate'], tickers: ['BTC'], universe: { assets: 150, listingsEveryMs: 1e9, delistingsEveryMs: 1e9 } });
    const universe = sim.universe!;
    const onVenue = (venue: string) => universe.markets.filter((m) => m.venue === venue && m.listAt === 0);
    const nameOf = new Map(universe.assets.map((a) => [a.key, a.name]));
    const labels = await getJson<[string, string][][]>(`${sim.endpoints('bitfinex').rest}/v2/conf/pub:map:currency:label`);
    const label = new Map(labels[0]);
    expect(onVenue('bitfinex').length).toBeGreaterThan(3);
    for (const m of onVenue('bitfinex')) expect(label.get(m.spec.base)).toBe(nameOf.get(m.assetKey));
    expect(label.get('BTC')).toBe('Bitcoin');
    const currencies = await getJson<{ data: { currency: string; fullName: string }[] }>(`${sim.endpoints('kucoin').rest}/api/v3/currencies`);
    const fullName = new Map(currencies.data.map((c) => [c.currency, c.fullName]));
    for (const m of onVenue('kucoin')) expect(fullName.get(m.spec.base)).toBe(nameOf.get(m.assetKey));
    expect(fullName.get('USDT')).toBe('Tether');
    // KuCoin's currencies also give a made-up base's SIMULATED contract, as an ERC20 chain: the collector lists it on ethereum.
    const kucoinListed = new Map((await kucoin.listMarkets(venueIo, sim.endpoints('kucoin'))).map((l) => [l.symbol, l.baseContracts]));
    expect(onVenue('kucoin').length).toBeGreaterThan(3);
    for (const m of onVenue('kucoin')) {
      expect(kucoinListed.get(m.spec.symbol), m.spec.symbol).toEqual(m.assetKey.startsWith('sim:') ? [{ platform: 'ethereum', address: simulatedContract(m.assetKey) }] : undefined);
    }
    expect(kucoinListed.get('BTC-USDT')).toBeUndefined();
    // Coinbase's Exchange API currencies give it on the ethereum network: the collector lists it there too.
    const coinbaseListed = new Map((await coinbase.listMarkets(venueIo, sim.endpoints('coinbase'))).map((l) => [l.symbol, l.baseContracts]));
    expect(onVenue('coinbase').filter((m) => m.assetKey.startsWith('sim:')).length).toBeGreaterThan(0);
    for (const m of onVenue('coinbase')) {
      expect(coinbaseListed.get(m.spec.symbol), m.spec.symbol).toEqual(m.assetKey.startsWith('sim:') ? [{ platform: 'ethereum', address: simulatedContract(m.assetKey) }] : undefined);
    }
    // Gate's currencies give it on the chain ETH: the collector lists it on ethereum, the name coming from the pairs' base_name.
    const gateListed = new Map((await gate.listMarkets(venueIo, sim.endpoints('gate'))).map((l) => [l.symbol, l]));
    expect(onVenue('gate').filter((m) => m.assetKey.startsWith('sim:')).length).toBeGreaterThan(3);
    for (const m of onVenue('gate')) {
      expect(gateListed.get(m.spec.symbol)?.baseContracts, m.spec.symbol).toEqual(m.assetKey.startsWith('sim:') ? [{ platform: 'ethereum', address: simulatedContract(m.assetKey) }] : undefined);
      if (m.assetKey.startsWith('sim:')) expect(gateListed.get(m.spec.symbol)?.baseName).toBe(nameOf.get(m.assetKey));
    }
    const pairs = await getJson<{ url_symbol: string; description: string }[]>(`${sim.endpoints('bitstamp').rest}/api/v2/trading-pairs-info/`);
    const description = new Map(pairs.map((p) => [p.url_symbol, p.description]));
    expect(onVenue('bitstamp').length).toBeGreaterThan(0);
    for (const m of onVenue('bitstamp')) expect(description.get(m.spec.symbol)).toBe(`${nameOf.get(m.assetKey)} / US Dollar`);
  });

  test('a per-1000 listing prices 1000 units: its truth says so, and its trades say so against the plain market', async () => {
    sim = await start({ assets: 300, listingsEveryMs: 1e9, delistingsEveryMs: 1e9 });
    const universe = sim.universe!;
    expect(universe.truth('bybit-linear', 'SHIB1000USDT')).toEqual({ assetKey: assetIdForVenueTicker('bybit-linear', 'SHIB'), unit: 1000, synthetic: false });
    expect(universe.truth('bybit-linear', 'SHIBUSDT')).toEqual({ assetKey: assetIdForVenueTicker('bybit-linear', 'SHIB'), unit: 1, synthetic: false });
    const scaled = universe.markets.filter((m) => m.venue === 'bybit-linear' && m.kind === 'scaled' && m.assetKey.startsWith('sim:'));
    expect(scaled.length).toBeGreaterThan(0);
    for (const m of scaled) expect(universe.truth('bybit-linear', m.spec.symbol)).toEqual({ assetKey: m.assetKey, unit: m.unit, synthetic: true });
    expect(universe.truth('bybit-linear', 'NOSUCHUSDT')).toBeUndefined();

    const rest = sim.endpoints('bybit-linear').rest;
    const lastPrice = (symbol: string) =>
      untilValue(async () => {
        const body = await getJson<{ result: { list: { price: string }[] } }>(`${rest}/v5/market/recent-trade?category=linear&symbol=${symbol}&limit=1`);
        return body.result.list[0] ? Number(body.result.list[0].price) : undefined;
      }, `a trade of ${symbol}`);
    const ratio = (await lastPrice('SHIB1000USDT')) / (await lastPrice('SHIBUSDT'));
    expect(ratio).toBeGreaterThan(990);
    expect(ratio).toBeLessThan(1010);
  });
});

describe('listings and delistings', () => {
  test('on schedule: a late market is refused on the websocket until it lists, then served; a scheduled delisting leaves the endpoint', async () => {
    sim = await start({ assets: 300, listingsEveryMs: 300, delistingsEveryMs: 1_000 });
    const universe = sim.universe!;
    const late = universe.markets.filter((m) => m.venue === 'gate' && m.listAt > 0).sort((a, b) => a.listAt - b.listAt)[0]!;
    expect((await listed(sim, 'gate')).has(late.spec.symbol)).toBe(false);
    const frames: { event?: string; error?: { message: string }; payload?: string[] }[] = [];
    const socket = new WebSocket(sim.endpoints('gate').ws);
    socket.on('message', (data) => frames.push(JSON.parse(data.toString())));
    await new Promise((r) => socket.once('open', r));
    const subscribe = () => socket.send(JSON.stringify({ time: 0, channel: 'spot.trades', event: 'subscribe', payload: [late.spec.symbol] }));
    subscribe();
    await until(() => frames.some((f) => f.error?.message === `unknown currency pair ${late.spec.symbol}`), 'the refusal of a pair not listed yet');
    await until(async () => (await listed(sim!, 'gate')).has(late.spec.symbol), `${late.spec.symbol} listed`, 30_000);
    subscribe();
    await until(() => frames.some((f) => f.event === 'subscribe' && !f.error && f.payload?.[0] === late.spec.symbol), 'the subscription accepted');
    socket.terminate();

    const gone = universe.markets.filter((m) => venues.includes(m.venue as SimulatedVenueId) && m.delistAt !== undefined).sort((a, b) => a.delistAt! - b.delistAt!)[0]!;
    expect((await listed(sim, gone.venue as SimulatedVenueId)).has(gone.spec.symbol)).toBe(true);
    await until(async () => !(await listed(sim!, gone.venue as SimulatedVenueId)).has(gone.spec.symbol), `${gone.spec.symbol} delisted`, 30_000);
    // Still true to what it was.
    expect(universe.truth(gone.venue, gone.spec.symbol)).toEqual({ assetKey: gone.assetKey, unit: 1, synthetic: true });
  });

  test('on command: a brand-new asset lists on the endpoint at once and trades at its price; delisted, it stops', async () => {
    sim = await start({ assets: 300, listingsEveryMs: 1e9, delistingsEveryMs: 1e9 });
    const universe = sim.universe!;
    const tickers = new Set(universe.assets.map((a) => a.ticker));
    const fresh = universe.listNow('gate', { tradesPerSecond: 5 });
    expect(tickers.has(fresh.asset.ticker)).toBe(false);
    expect(assetIdForVenueTicker('gate', fresh.asset.ticker)).toBeUndefined();
    expect(fresh.symbol).toBe(`${fresh.asset.ticker}_USDT`);
    expect(universe.assets).toContainEqual(fresh.asset);
    expect(universe.truth('gate', fresh.symbol)).toEqual({ assetKey: fresh.asset.key, unit: 1, synthetic: true });
    expect((await listed(sim, 'gate')).get(fresh.symbol)).toEqual({ base: fresh.asset.ticker, name: fresh.asset.name });

    const trades: { price: string; currency_pair: string }[] = [];
    const socket = new WebSocket(sim.endpoints('gate').ws);
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { channel: string; event: string; result: { price: string; currency_pair: string } };
      if (frame.channel === 'spot.trades' && frame.event === 'update') trades.push(frame.result);
    });
    await new Promise((r) => socket.once('open', r));
    socket.send(JSON.stringify({ time: 0, channel: 'spot.trades', event: 'subscribe', payload: [fresh.symbol] }));
    await until(() => trades.length >= 5, 'trades of the new listing');
    const reference = sim.reference(fresh.asset.key, 'USDT');
    for (const t of trades) {
      expect(t.currency_pair).toBe(fresh.symbol);
      expect(Math.abs(Number(t.price) / reference - 1)).toBeLessThan(0.02);
    }

    // The same asset on one more venue: one asset, two markets.
    const again = universe.listNow('binance', { asset: fresh.asset.key });
    expect(again.symbol).toBe(`${fresh.asset.ticker}USDT`);
    expect(universe.truth('binance', again.symbol)?.assetKey).toBe(fresh.asset.key);
    expect((await listed(sim, 'binance')).has(again.symbol)).toBe(true);

    universe.delistNow('gate', fresh.symbol);
    expect((await listed(sim, 'gate')).has(fresh.symbol)).toBe(false);
    const gate = sim.venue('gate');
    const printedAtDelisting = gate.printed.of(fresh.symbol).length;
    const others = gate.printed.count;
    await until(() => gate.printed.count > others + 20, 'the venue trading on');
    expect(gate.printed.of(fresh.symbol).length).toBe(printedAtDelisting);
    socket.terminate();
  });
});

test('the long tail trades at its low rates, and a quiet market\'s book does not move between its trades', async () => {
  sim = await start({ assets: 300, listingsEveryMs: 1e9, delistingsEveryMs: 1e9 });
  const universe = sim.universe!;
  const running = universe.markets.filter((m) => venues.includes(m.venue as SimulatedVenueId) && m.listAt === 0);
  const tail = running.filter((m) => m.tradesPerSecond < 0.05);
  expect(tail.length).toBeGreaterThan(100);
  const listingOf = (m: (typeof running)[number]) => sim!.venue(m.venue as SimulatedVenueId).listing;
  const updateIds = new Map(tail.map((m) => [m, listingOf(m).bySymbol.get(m.spec.symbol)!.updateId]));
  const from = Date.now() + 100;
  const to = from + 10_000;
  await until(() => Date.now() > to + 300, 'ten seconds of trading', 15_000);
  const tradesIn = (m: (typeof running)[number]) => sim!.venue(m.venue as SimulatedVenueId).printed.between(m.spec.symbol, from, to + 1, Infinity).length;

  // Poisson counts: within five standard deviations of what their rates expect over the ten seconds.
  const expected = tail.reduce((sum, m) => sum + m.tradesPerSecond * 10, 0);
  const observed = tail.reduce((sum, m) => sum + tradesIn(m), 0);
  expect(Math.abs(observed - expected)).toBeLessThan(5 * Math.sqrt(expected) + 3);
  const busiest = running.reduce((a, b) => (b.tradesPerSecond > a.tradesPerSecond ? b : a));
  expect(Math.abs(tradesIn(busiest) - busiest.tradesPerSecond * 10)).toBeLessThan(5 * Math.sqrt(busiest.tradesPerSecond * 10) + 3);

  // A market that did not trade at all since the start kept its book as listed.
  const untraded = tail.filter((m) => sim!.venue(m.venue as SimulatedVenueId).printed.of(m.spec.symbol).length === 0);
  expect(untraded.length).toBeGreaterThan(10);
  for (const m of untraded) expect(listingOf(m).bySymbol.get(m.spec.symbol)!.updateId).toBe(updateIds.get(m));
});

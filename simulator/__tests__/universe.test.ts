// The universe generator: the long tail of the market, shaped like the real one and true to its own
// ground truth (shared tickers, per-1000 listings), deterministic by seed.
import { describe, expect, test } from 'vitest';
import { assetIdForVenueTicker, findAsset } from '../../infra/catalog/catalog.ts';
import { listingFormats, simulatedVenueIds } from '../simulator.ts';
import { generateUniverse, type Universe, type UniverseMarket } from '../universe.ts';

const full = generateUniverse(1, listingFormats);
const byKey = new WeakMap<Universe, Map<string, Universe['assets'][number]>>();
const assetOf = (u: Universe, key: string) => (byKey.get(u) ?? byKey.set(u, new Map(u.assets.map((a) => [a.key, a]))).get(u)!).get(key);
const synthetic = (u: Universe) => u.markets.filter((m) => m.assetKey.startsWith('sim:'));
const venuesByKey = new WeakMap<Universe, Map<string, Set<string>>>();
function venuesOf(u: Universe, key: string): Set<string> {
  let byAsset = venuesByKey.get(u);
  if (!byAsset) {
    venuesByKey.set(u, (byAsset = new Map()));
    for (const m of u.markets) byAsset.set(m.assetKey, (byAsset.get(m.assetKey) ?? new Set()).add(m.venue));
  }
  return byAsset.get(key) ?? new Set();
}

/** Each venue's symbols, as its docs write them (a pattern per venue, written here apart from the formats). */
const symbolPatterns: Record<string, (m: UniverseMarket, ticker: string) => RegExp> = {
  binance: (m, t) => new RegExp(`^${t}(USDT|USDC)$`),
  'binance-futures': (m, t) => new RegExp(`^(1000|1000000)?${t}(USDT|USDC)$`),
  okx: (m, t) => new RegExp(`^${t}-(USDT|USDC)$`),
  'okx-swap': (m, t) => new RegExp(`^${t}-(USDT|USDC)-SWAP$`),
  bybit: (m, t) => new RegExp(`^${t}(USDT|USDC)$`),
  'bybit-linear': (m, t) => new RegExp(`^(1000|1000000)?${t}USDT$`),
  coinbase: (m, t) => new RegExp(`^${t}-(USD|USDT)$`),
  kraken: (m, t) => new RegExp(`^${t}/(USD|USDT)$`),
  bitstamp: (m, t) => new RegExp(`^${t.toLowerCase()}usd$`),
  bitfinex: (m, t) => new RegExp(t.length === 3 ? `^t${t}USD$` : `^t${t}:USD$`),
  'bitfinex-derivatives': (m, t) => new RegExp(`^t${t}F0:USTF0$`),
  gate: (m, t) => new RegExp(`^${t}_(USDT|USDC)$`),
  deribit: (m, t) => new RegExp(`^${t}_USDC-PERPETUAL$`),
  kucoin: (m, t) => new RegExp(`^${t}-(USDT|USDC)$`),
  bitmex: (m, t) => new RegExp(`^${t}USD$`),
};

describe('the universe at its default size', () => {
  test('at least 2,000 assets and 6,000 markets, on every one of the 15 venues', () => {
    expect(full.assets.length).toBeGreaterThanOrEqual(2_000);
    expect(full.markets.length).toBeGreaterThanOrEqual(6_000);
    expect(new Set(full.markets.map((m) => m.venue))).toEqual(new Set(simulatedVenueIds));
    expect(simulatedVenueIds).toHaveLength(15);
    expect(new Set(full.assets.map((a) => a.key)).size).toBe(full.assets.length);
  });

  test('tickers are pronounceable capitals, 2 to 8 long, some with a digit; none is a ticker the catalog maps on its venue', () => {
    for (const a of full.assets) expect(a.ticker).toMatch(/^[A-Z][A-Z0-9]{1,7}$/);
    const withDigit = full.assets.filter((a) => /\d/.test(a.ticker)).length;
    expect(withDigit).toBeGreaterThan(20);
    expect(withDigit).toBeLessThan(full.assets.length / 4);
    for (const m of synthetic(full)) {
      expect(assetIdForVenueTicker(m.venue, assetOf(full, m.assetKey)!.ticker), `${m.venue} ${m.spec.symbol}`).toBeUndefined();
      expect(assetIdForVenueTicker(m.venue, m.spec.base)).toBeUndefined();
    }
  });

  test('symbols are written in each venue\'s own format, once per venue', () => {
    for (const m of full.markets) {
      const ticker = m.assetKey.startsWith('sim:') ? assetOf(full, m.assetKey)!.ticker : m.spec.asset!;
      if (m.venue === 'bybit-linear' && m.spec.symbol === 'SHIB1000USDT') continue; // Bybit's own order, checked below
      expect(m.spec.symbol).toMatch(symbolPatterns[m.venue]!(m, ticker));
    }
    for (const venue of simulatedVenueIds) {
      const symbols = full.markets.filter((m) => m.venue === venue).map((m) => m.spec.symbol);
      expect(new Set(symbols).size, venue).toBe(symbols.length);
    }
  });

  test('start prices spread log-uniformly from 1e-8 to 1e4: every decade holds assets', () => {
    const decades = new Map<number, number>();
    for (const a of full.assets) {
      expect(a.startPrice).toBeGreaterThanOrEqual(1e-8);
      expect(a.startPrice).toBeLessThanOrEqual(1e4);
      const d = Math.floor(Math.log10(a.startPrice));
      decades.set(d, (decades.get(d) ?? 0) + 1);
    }
    for (let d = -8; d < 4; d++) expect(decades.get(d) ?? 0, `decade 1e${d}`).toBeGreaterThan(full.assets.length / 12 / 2);
  });

  test('a long tail: most assets on one or two venues, a few on ten or more; most markets trade under 2 a minute, the top 5% carry most of the trades', () => {
    const counts = full.assets.map((a) => venuesOf(full, a.key).size);
    expect(counts.filter((c) => c <= 2).length / counts.length).toBeGreaterThan(0.5);
    const wide = counts.filter((c) => c >= 10).length;
    expect(wide).toBeGreaterThan(10);
    expect(wide).toBeLessThan(counts.length * 0.15);
    const rates = full.markets.map((m) => m.tradesPerSecond).sort((a, b) => b - a);
    const total = rates.reduce((sum, r) => sum + r, 0);
    const top = rates.slice(0, Math.ceil(rates.length * 0.05)).reduce((sum, r) => sum + r, 0);
    expect(top / total).toBeGreaterThan(0.5);
    expect(rates.filter((r) => r < 2 / 60).length / rates.length).toBeGreaterThan(0.5);
    // All of it stays a simulator's load: under a thousand trades a second in all.
    expect(total).toBeLessThan(1_000);
    // Quiet markets keep small books.
    for (const m of full.markets) expect(m.spec.levels).toBe(m.tradesPerSecond >= 0.5 ? 25 : 10);
  });
});

describe('the traps, on purpose, with the truth', () => {
  test('a few dozen tickers are each shared by two different assets, on different venues, priced far apart', () => {
    const byTicker = new Map<string, string[]>();
    for (const a of full.assets) byTicker.set(a.ticker, [...(byTicker.get(a.ticker) ?? []), a.key]);
    const shared = [...byTicker.values()].filter((keys) => keys.length > 1);
    expect(shared.length).toBeGreaterThanOrEqual(24);
    expect(shared.length).toBeLessThanOrEqual(48);
    for (const [a, b, ...more] of shared) {
      expect(more).toEqual([]);
      const [first, second] = [assetOf(full, a!)!, assetOf(full, b!)!];
      const ratio = Math.max(first.startPrice, second.startPrice) / Math.min(first.startPrice, second.startPrice);
      expect(ratio).toBeGreaterThan(5);
      expect(first.name).not.toBe(second.name);
      const [onFirst, onSecond] = [venuesOf(full, a!), venuesOf(full, b!)];
      expect(onFirst.size).toBeGreaterThan(0);
      expect(onSecond.size).toBeGreaterThan(0);
      for (const v of onFirst) expect(onSecond.has(v)).toBe(false);
      for (const m of full.markets.filter((x) => x.assetKey === a || x.assetKey === b)) expect(m.kind).toBe('shared-ticker');
    }
  });

  test('scaled listings on the perpetual venues: synthetic and catalog assets per 1000 or per million, the same asset listed plain elsewhere', () => {
    const scaled = full.markets.filter((m) => m.kind === 'scaled');
    const syntheticScaled = scaled.filter((m) => m.assetKey.startsWith('sim:'));
    expect(new Set(syntheticScaled.map((m) => m.assetKey)).size).toBeGreaterThanOrEqual(5);
    for (const m of scaled) {
      expect(['binance-futures', 'bybit-linear']).toContain(m.venue);
      expect([1_000, 1_000_000]).toContain(m.unit);
      expect(m.spec.unit).toBe(m.unit);
      expect(m.spec.perpetual).toBe(true);
      expect(m.spec.base).toContain(String(m.unit));
    }
    expect(syntheticScaled.some((m) => m.unit === 1_000_000)).toBe(true);
    for (const m of syntheticScaled) {
      const asset = assetOf(full, m.assetKey)!;
      expect(m.spec.base).toBe(`${m.unit}${asset.ticker}`);
      // Per 1000 where a unit is under a tenth of a cent, per million under a millionth of a dollar.
      expect(asset.startPrice).toBeLessThan(m.unit === 1_000 ? 1e-3 : 1e-6);
      expect(full.markets.some((o) => o.assetKey === m.assetKey && o.unit === 1 && !o.spec.perpetual)).toBe(true);
      // The venue lists it scaled only: no plain market of it there.
      expect(full.markets.some((o) => o.assetKey === m.assetKey && o.venue === m.venue && o.unit === 1)).toBe(false);
    }
    // Catalog assets too: Bybit's per-1000 PEPE and SHIB, SHIB with the multiple after the ticker, as Bybit writes it.
    const catalog = scaled.filter((m) => !m.assetKey.startsWith('sim:')).map((m) => [m.spec.symbol, m.spec.base, m.assetKey, m.unit]);
    expect(catalog).toEqual([
      ['1000PEPEUSDT', '1000PEPE', assetIdForVenueTicker('bybit-linear', 'PEPE'), 1000],
      ['SHIB1000USDT', 'SHIB1000', assetIdForVenueTicker('bybit-linear', 'SHIB'), 1000],
    ]);
    expect(findAsset(catalog[1]![2] as string)?.name).toMatch(/Shiba/);
  });

  test('listings and delistings over time: brand-new assets and new markets one by one, a few markets delisting', () => {
    const u = generateUniverse(1, listingFormats, { listingsEveryMs: 1_000, delistingsEveryMs: 5_000 });
    const late = u.markets.filter((m) => m.listAt > 0).sort((a, b) => a.listAt - b.listAt);
    expect(late.length).toBeGreaterThan(u.markets.length * 0.02);
    expect(late.map((m) => m.listAt)).toEqual(late.map((_, i) => (i + 1) * 1_000));
    const listedAtStart = new Set(u.markets.filter((m) => m.listAt === 0).map((m) => m.assetKey));
    const brandNew = u.assets.filter((a) => !listedAtStart.has(a.key));
    expect(brandNew.length).toBeGreaterThan(u.assets.length * 0.02);
    const delisted = u.markets.filter((m) => m.delistAt !== undefined).sort((a, b) => a.delistAt! - b.delistAt!);
    expect(delisted.length).toBeGreaterThan(20);
    expect(delisted.map((m) => m.delistAt)).toEqual(delisted.map((_, i) => (i + 1) * 5_000));
    for (const m of delisted) expect(m.listAt).toBe(0);
    // The traps stay put: no market of an asset with a shared ticker or a scaled listing moves.
    const traps = new Set(u.markets.filter((m) => m.kind !== 'plain').map((m) => m.assetKey));
    for (const m of [...late, ...delisted]) expect(traps.has(m.assetKey), m.spec.symbol).toBe(false);
  });
});

describe('by seed', () => {
  test('the same seed and size give the same universe; another seed another one; a smaller size is smaller', () => {
    expect(generateUniverse(1, listingFormats)).toEqual(full);
    const other = generateUniverse(2, listingFormats);
    expect(other.assets.map((a) => a.ticker)).not.toEqual(full.assets.map((a) => a.ticker));
    const small = generateUniverse(1, listingFormats, { assets: 200, tradesPerSecondScale: 2 });
    expect(small.assets).toHaveLength(200);
    expect(small.markets.length).toBeGreaterThan(400);
    expect(small.markets.length).toBeLessThan(1_500);
    const doubled = generateUniverse(1, listingFormats, { assets: 200 });
    expect(small.markets.map((m) => m.tradesPerSecond)).toEqual(doubled.markets.map((m) => m.tradesPerSecond * 2));
  });
});

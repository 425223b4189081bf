// Ids of discovered assets: one per venue and ticker, readable back, never a catalog id.
import { describe, expect, test } from 'vitest';
import { catalogAssets, findAsset } from '../catalog.ts';
import { circulatingUnknown, describeAsset, discoveredAsset, discoveredAssetId, parseDiscoveredId, retiredAssetId, supplyUnknown, tickerSlug } from '../discovered.ts';

describe('discovered asset ids', () => {
  test('the ticker in lower case, then `--`, then the venue; read back to both', () => {
    expect(discoveredAssetId('binance', 'NOTACOIN')).toBe('notacoin--binance');
    expect(discoveredAssetId('binance-futures', '1000PEPE')).toBe('1000pepe--binance-futures');
    expect(parseDiscoveredId('1000pepe--binance-futures')).toEqual({ ticker: '1000pepe', venue: 'binance-futures' });
    expect(parseDiscoveredId('notacoin--binance')).toEqual({ ticker: 'notacoin', venue: 'binance' });
  });

  test('tickers with other characters: runs of them become one `-`, none at the ends; a ticker of nothing else has no id', () => {
    expect(tickerSlug('USD.E')).toBe('usd-e');
    expect(tickerSlug('$WIF')).toBe('wif');
    expect(tickerSlug('A__B')).toBe('a-b');
    expect(discoveredAssetId('kraken', '...')).toBeUndefined();
    expect(parseDiscoveredId(discoveredAssetId('kraken', 'USD.E')!)).toEqual({ ticker: 'usd-e', venue: 'kraken' });
  });

  test('catalog ids are not discovered ids (none holds `--`), and malformed ids parse to nothing', () => {
    expect(catalogAssets.filter((a) => parseDiscoveredId(a.id) !== undefined)).toEqual([]);
    for (const id of ['bitcoin', 'foo-binance', '--binance', 'foo--', 'FOO--binance', 'foo---binance', `${'a'.repeat(25)}--binance`]) expect(parseDiscoveredId(id)).toBeUndefined();
  });

  test('a retired id: the discovered id, then `--` and the UTC day of its delisting; read back to the three; not retired twice', () => {
    const id = retiredAssetId('foo--gate', Date.UTC(2026, 11, 2, 23, 59, 59, 999));
    expect(id).toBe('foo--gate--20261202');
    expect(parseDiscoveredId(id!)).toEqual({ ticker: 'foo', venue: 'gate', delistedOn: '2026-12-02' });
    expect(retiredAssetId('foo--gate', Date.UTC(2026, 11, 3))).toBe('foo--gate--20261203');
    expect(retiredAssetId(id!, Date.UTC(2026, 11, 9))).toBeUndefined();
    expect(retiredAssetId('bitcoin', Date.UTC(2026, 11, 9))).toBeUndefined();
    for (const bad of ['foo--gate--2026120', 'foo--gate--202612021', 'foo--gate--x', 'foo--gate--20261202--20261203']) expect(parseDiscoveredId(bad)).toBeUndefined();
    // Served as a discovered asset of that venue and ticker, saying it was delisted.
    expect(discoveredAsset(id!)).toMatchObject({ id, symbol: 'foo', name: 'FOO' });
    expect(discoveredAsset(id!)!.description).toContain('left that listing on 2026-12-02');
  });

  test('a discovered asset is served in the catalog shape: ticker as symbol and name, its own logo, no category, an unknown supply', () => {
    const asset = discoveredAsset('notacoin--binance')!;
    expect(asset).toMatchObject({ id: 'notacoin--binance', symbol: 'notacoin', name: 'NOTACOIN', categories: [], platforms: {}, stablecoin: false, wrapped: false });
    expect(asset.image.large).toBe('/assets/coins/notacoin--binance.svg?size=large');
    expect(asset.supply).toMatchObject({ circulating: 0, total: 0, max: null, source: 'unknown' });
    expect(supplyUnknown(asset)).toBe(true);
    expect(supplyUnknown(findAsset('ethereum')!)).toBe(false);
    // A venue we do not track names no asset.
    expect(discoveredAsset('notacoin--nowhere')).toBeUndefined();
  });

  test("with its listing's contracts and a chain's answer for one: platforms with that platform's decimals, a total supply from the chain, its circulating supply unknown", () => {
    const contracts = { tron: 'TXyz', ethereum: '0xabc' };
    const listedOnly = discoveredAsset('toka--kucoin', { contracts })!;
    expect(listedOnly.platforms).toEqual({ tron: { contract_address: 'TXyz', decimal_place: null }, ethereum: { contract_address: '0xabc', decimal_place: null } });
    expect(listedOnly.supply.source).toBe('unknown');
    const token = { platform: 'ethereum', name: 'Toka On Chain', decimals: 6, totalSupply: 42.5, checkedAt: Date.UTC(2026, 11, 3, 4) };
    const read = discoveredAsset('toka--kucoin', { contracts, token })!;
    expect(read.platforms).toEqual({ tron: { contract_address: 'TXyz', decimal_place: null }, ethereum: { contract_address: '0xabc', decimal_place: 6 } });
    expect(read.supply).toEqual({ circulating: 0, total: 42.5, max: null, source: 'chain:ethereum', asOf: '2026-12-03' });
    expect(read.name).toBe('Toka On Chain');
    expect(read.description).toContain("its total supply is its token contract's on ethereum, its circulating supply is unknown");
    expect([supplyUnknown(read), circulatingUnknown(read), circulatingUnknown(listedOnly), circulatingUnknown(findAsset('ethereum')!)]).toEqual([false, true, true, false]);
    // The venue's name wins over the contract's.
    expect(discoveredAsset('toka--kucoin', { name: 'Toka', contracts, token })!.name).toBe('Toka');
  });

  test('describeAsset: the catalog entry for a catalog id, the discovered asset for a discovered id, nothing otherwise', () => {
    expect(describeAsset('bitcoin')).toBe(findAsset('bitcoin'));
    expect(describeAsset('notacoin--okx')?.symbol).toBe('notacoin');
    expect(describeAsset('notacoin')).toBeUndefined();
  });
});

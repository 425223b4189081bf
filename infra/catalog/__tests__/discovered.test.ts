// Ids of discovered assets: one per venue and ticker, readable back, never a catalog id.
import { describe, expect, test } from 'vitest';
import { catalogAssets, findAsset } from '../catalog.ts';
import { describeAsset, discoveredAsset, discoveredAssetId, parseDiscoveredId, supplyUnknown, tickerSlug } from '../discovered.ts';

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

  test('describeAsset: the catalog entry for a catalog id, the discovered asset for a discovered id, nothing otherwise', () => {
    expect(describeAsset('bitcoin')).toBe(findAsset('bitcoin'));
    expect(describeAsset('notacoin--okx')?.symbol).toBe('notacoin');
    expect(describeAsset('notacoin')).toBeUndefined();
  });
});

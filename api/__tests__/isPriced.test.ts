import { expect, test } from 'vitest';
import { catalogAssets } from '../../infra/catalog/catalog.ts';
import { isPriced, type AssetMarket } from '../read/assetMarket.ts';

const point = { price: 100, at: 1_700_000_000_000 };
const windows = ['1h', '24h', '7d', '14d', '30d', '1y'] as const;
const ranges = ['24h', '7d', '30d', '1y'] as const;

/** A market with every figure known. */
function priced(): AssetMarket {
  return {
    asset: catalogAssets[0]!,
    rank: 1,
    price: 101,
    updatedAt: point.at,
    measured: true,
    volume24h: 5,
    high24h: 102,
    low24h: 99,
    change: Object.fromEntries(windows.map((w) => [w, 1])) as AssetMarket['change'],
    circulatingSupply: 10,
    totalSupply: 10,
    maxSupply: null,
    supplySource: 'catalog',
    marketCap: 1_010,
    fullyDilutedValuation: 1_010,
    marketCapChange24h: 1,
    reference: Object.fromEntries(windows.map((w) => [w, point])) as AssetMarket['reference'],
    ranges: Object.fromEntries(ranges.map((w) => [w, { high: 102, low: 99 }])) as AssetMarket['ranges'],
    ath: point,
    atl: point,
    observedSince: point.at,
  };
}

test('isPriced: a market with every figure known is priced', () => {
  expect(isPriced(priced())).toBe(true);
  // maxSupply null is no missing figure: the asset has no maximum.
  expect(isPriced({ ...priced(), maxSupply: null })).toBe(true);
});

test('isPriced: any one figure missing makes it unpriced', () => {
  const fields = ['price', 'updatedAt', 'high24h', 'low24h', 'marketCap', 'fullyDilutedValuation', 'marketCapChange24h', 'ath', 'atl', 'observedSince'] as const;
  for (const field of fields) expect(isPriced({ ...priced(), [field]: null }), field).toBe(false);
  for (const w of windows) {
    const m = priced();
    expect(isPriced({ ...m, change: { ...m.change, [w]: null } }), `change ${w}`).toBe(false);
    expect(isPriced({ ...m, reference: { ...m.reference, [w]: null } }), `reference ${w}`).toBe(false);
  }
  for (const w of ranges) {
    const m = priced();
    expect(isPriced({ ...m, ranges: { ...m.ranges, [w]: null } }), `range ${w}`).toBe(false);
  }
});

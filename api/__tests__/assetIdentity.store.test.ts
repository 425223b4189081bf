// /status/assets.json over stored trades: which discovered assets share a ticker, and the verdict
// of their index prices; `npm run assets` prints it (reportLines).
import { describe, expect, it } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, trade, type TradeRow } from '../../test/support/harness.ts';
import { reportLines } from '../assetsCli.ts';
import type { AssetIdentityResponse } from '../status/assetIdentity.ts';

const T = Date.now();
const nowSecond = Math.floor(T / 1000);

/** Five trades a second apart at one price, the last 3 s ago. */
const prints = (venue: string, market: string, asset: string, price: number): TradeRow[] =>
  Array.from({ length: 5 }, (_, i) => trade({ venue, market, asset, quote: 'USDT', trade_id: `${market}-${i}`, ts: (nowSecond - 3 - i) * 1000, price, quantity: 10 }));

const trades = [
  ...prints('binance', 'PEPEUSDT', 'pepe', 0.00001),
  // A thousand PEPE at 1,010 times PEPE's price: 1 % off per unit, within the bound.
  ...prints('binance-futures', '1000PEPEUSDT', '1000pepe--binance-futures', 0.0101),
  // FOO on two venues, two assets: 500 times apart.
  ...prints('gate', 'FOO_USDT', 'foo--gate', 10),
  ...prints('kraken', 'FOOUSDT', 'foo--kraken', 0.02),
  ...prints('okx', 'LONELY-USDT', 'lonely--okx', 3),
];

describe('/status/assets.json', () => {
  const api = useTestApi({
    keyName: 'identity-test',
    seed: async (store) => {
      await store.insert('trades', trades);
      await computeIndex(store, T + 2_500);
    },
  });

  it('says which discovered assets share a ticker and whether their prices agree', async () => {
    const res = await api.getWithoutKey('/status/assets.json');
    expect(res.status).toBe(200);
    const report = res.json as AssetIdentityResponse;
    expect(report.counts).toEqual({ discovered: 4, distinct: 1, ambiguous: 1, apart: 2 });
    expect(report.assets.map((r) => [r.id, r.state])).toEqual([
      ['1000pepe--binance-futures', 'ambiguous'],
      ['foo--gate', 'apart'],
      ['foo--kraken', 'apart'],
      ['lonely--okx', 'distinct'],
    ]);
    const [pepe] = report.assets;
    expect(pepe!.base).toEqual({ ticker: 'pepe', scale: 1000 });
    expect(pepe!.candidates).toHaveLength(1);
    expect(pepe!.candidates[0]).toMatchObject({ id: 'pepe', verdict: 'agrees' });
    expect(pepe!.candidates[0]!.deviation).toBeCloseTo(0.01, 9);
    expect(report.assets[1]!.candidates).toEqual([expect.objectContaining({ id: 'foo--kraken', verdict: 'disagrees' })]);
    expect(report.assets[1]!.candidates[0]!.deviation).toBeCloseTo(10 / 0.02 - 1, 6);

    const lines = reportLines(report, false);
    expect(lines[0]).toBe('4 discovered assets: 1 ambiguous, 2 apart, 1 distinct (prices differing by more than 5.00% are not one asset)');
    expect(lines[1]).toBe('ambiguous 1000pepe--binance-futures = 1000 x pepe  unit $0.0000101000');
    expect(lines[2]).toMatch(/^ {12}agrees {4}pepe {2}unit \$0\.0000100000 {2}off by 1\.00%$/);
    expect(lines.some((l) => l.includes('lonely--okx'))).toBe(false);
    expect(reportLines(report, true).some((l) => l.startsWith('distinct  lonely--okx'))).toBe(true);
  });
});

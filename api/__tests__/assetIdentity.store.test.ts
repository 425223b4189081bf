// /status/assets.json over stored trades: which discovered assets share a ticker, and the verdict
// of their index prices; `npm run assets` prints it (reportLines).
import { describe, expect, it } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, trade, type TradeRow } from '../../test/support/harness.ts';
import { reportLines } from '../assetsCli.ts';
import type { AssetIdentityResponse } from '../status/assetIdentity.ts';

const T = Date.now();
const nowSecond = Math.floor(T / 1000);
const hour = 3_600_000;

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
  // BAR on Gate, delisted and retired: its last day of trading at 5 (and at 50 two days before it);
  // Gate lists BAR again for another asset, at 0.001.
  ...[0, 1].map((i) => trade({ venue: 'gate', market: 'BAR_USDT', asset: 'bar--gate--20261202', quote: 'USDT', trade_id: `old-${i}`, ts: T - 72 * hour - i * 60_000, price: 5, quantity: 10 })),
  trade({ venue: 'gate', market: 'BAR_USDT', asset: 'bar--gate--20261202', quote: 'USDT', trade_id: 'older', ts: T - 120 * hour, price: 50, quantity: 10 }),
  ...prints('gate', 'BAR_USDT', 'bar--gate', 0.001),
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
    expect(report.counts).toEqual({ discovered: 6, distinct: 1, ambiguous: 1, apart: 4 });
    expect(report.assets.map((r) => [r.id, r.state])).toEqual([
      ['1000pepe--binance-futures', 'ambiguous'],
      ['bar--gate', 'apart'],
      ['bar--gate--20261202', 'apart'],
      ['foo--gate', 'apart'],
      ['foo--kraken', 'apart'],
      ['lonely--okx', 'distinct'],
    ]);
    const [pepe] = report.assets;
    expect(pepe!.base).toEqual({ ticker: 'pepe', scale: 1000 });
    expect(pepe!.candidates).toHaveLength(1);
    expect(pepe!.candidates[0]).toMatchObject({ id: 'pepe', verdict: 'agrees' });
    expect(pepe!.candidates[0]!.deviation).toBeCloseTo(0.01, 9);
    expect(report.assets[3]!.candidates).toEqual([expect.objectContaining({ id: 'foo--kraken', verdict: 'disagrees' })]);
    expect(report.assets[3]!.candidates[0]!.deviation).toBeCloseTo(10 / 0.02 - 1, 6);
    // The new BAR against the retired one's last day of trading (5, not the 50 of before it).
    const [bar, retired] = [report.assets[1]!, report.assets[2]!];
    expect([bar.delistedOn, retired.delistedOn]).toEqual([null, '2026-12-02']);
    expect(retired.unitPrice).toBeCloseTo(5, 9);
    expect(bar.candidates).toEqual([expect.objectContaining({ id: 'bar--gate--20261202', verdict: 'disagrees' })]);
    expect(bar.candidates[0]!.deviation).toBeCloseTo(5 / 0.001 - 1, 6);

    const lines = reportLines(report, false);
    expect(lines[0]).toBe('6 discovered assets: 1 ambiguous, 4 apart, 1 distinct (prices differing by more than 5.00% are not one asset)');
    expect(lines).toContain('apart     bar--gate--20261202  unit $5.00000  (delisted 2026-12-02: price of its last day)');
    expect(lines[1]).toBe('ambiguous 1000pepe--binance-futures = 1000 x pepe  unit $0.0000101000');
    expect(lines[2]).toMatch(/^ {12}agrees {4}pepe {2}unit \$0\.0000100000 {2}off by 1\.00%$/);
    expect(lines.some((l) => l.includes('lonely--okx'))).toBe(false);
    expect(reportLines(report, true).some((l) => l.startsWith('distinct  lonely--okx'))).toBe(true);
  });
});

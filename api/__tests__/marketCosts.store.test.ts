import { expect, test } from 'vitest';
import { marketQuality } from '../../aggregate/marketQuality.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { trade } from '../../test/support/harness.ts';

// Spec 2.4: costBuy/costSell are null or a map of order size to a number. Sizes a thin book
// cannot fill are left out of the map; a book that fills none gives null.


/** Asks: $15,000 at 100 then $101,000 at 101 (fills $10k and $100k, not $1M); bids: $19,800 at 99 (fills $10k only). */
const thin = { bids: [[99, 200]] as [number, number][], asks: [[100, 150], [101, 1_000]] as [number, number][] };
/** $10 and $11 on each side: fills no size. */
const empty = { bids: [[10, 1]] as [number, number][], asks: [[11, 1]] as [number, number][] };

const api = useTestApi({
  keyName: 'costs-test',
  seed: async (store) => {
    const now = Date.now();
    await store.insert('trades', [
      trade({ venue: 'binance', market: 'SOLUSDT', asset: 'solana', quote: 'USDT', trade_id: '1', ts: now - 60_000, price: 99.5, quantity: 10 }),
      trade({ venue: 'coinbase', market: 'SOL-USD', asset: 'solana', quote: 'USD', trade_id: '1', ts: now - 50_000, price: 10.5, quantity: 1 }),
      trade({ venue: 'kraken', market: 'SOLUSD', asset: 'solana', quote: 'USD', trade_id: '1', ts: now - 40_000, price: 99.5, quantity: 1 }),
    ]);
    const row = (venue: string, market: string, quote: string, book: typeof thin) => {
      const q = marketQuality(book, 1)!;
      return {
        asset: 'solana', venue, market, quote, ts: now, spread_bps: q.spreadBps, depth_bid_2: q.depthBid, depth_ask_2: q.depthAsk, depth_bid_1: q.depthBid1,
        depth_ask_1: q.depthAsk1, cost_buy: q.costBuy, cost_sell: q.costSell, liquidity_score: q.liquidityScore,
      };
    };
    await store.insert('market_quality', [
      row('binance', 'SOLUSDT', 'USDT', thin),
      row('coinbase', 'SOL-USD', 'USD', empty),
      // A row as stored before sizes were left out: an unfillable size held null.
      { ...row('kraken', 'SOLUSD', 'USD', thin), cost_buy: { '10000': 1.5, '100000': null, '1000000': null }, cost_sell: { '10000': null, '100000': null, '1000000': null } },
    ]);
  },
});

test('a thin book: sizes it cannot fill are left out of costBuy/costSell, and a book that fills none gives null', async () => {
  const res = await api.get('/v1/coins/solana/markets');
  expect(res.status).toBe(200);
  const markets = (res.json as { markets: { venueId: string; costBuy: unknown; costSell: unknown }[] }).markets;
  const of = (venue: string) => markets.find((m) => m.venueId === venue)!;
  const mid = 99.5;
  // $100k bought: 150 units at 100, the rest at 101.
  const averageBuy100k = 100_000 / (150 + 85_000 / 101);
  const binance = of('binance') as { costBuy: Record<string, number>; costSell: Record<string, number> };
  expect(Object.keys(binance.costBuy).sort()).toEqual(['10000', '100000']);
  expect(binance.costBuy['10000']).toBeCloseTo((100 / mid - 1) * 10_000, 9);
  expect(binance.costBuy['100000']).toBeCloseTo((averageBuy100k / mid - 1) * 10_000, 9);
  expect(Object.keys(binance.costSell)).toEqual(['10000']);
  expect(binance.costSell['10000']).toBeCloseTo((1 - 99 / mid) * 10_000, 9);
  expect(of('coinbase')).toMatchObject({ costBuy: null, costSell: null });
  expect(of('kraken')).toMatchObject({ costBuy: { '10000': 1.5 }, costSell: null });
  expect(res.text).not.toMatch(/"\d+":null/);
});

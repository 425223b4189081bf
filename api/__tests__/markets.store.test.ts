import { expect, test } from 'vitest';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import { referenceTicks } from '../../aggregate/__tests__/indexReference.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, trade, type TradeRow } from '../../test/support/harness.ts';

const now = Date.now();
const rows: TradeRow[] = [];

const api = useTestApi({
  keyName: 'markets-test',
  seed: async (store) => {
    const markets = [
      { venue: 'binance', market: 'SOLUSDT', quote: 'USDT' },
      { venue: 'binance', market: 'SOLUSDC', quote: 'USDC' },
      { venue: 'othervenue', market: 'SOL-USD', quote: 'USD' },
      // Not valued in USD yet: left out.
      { venue: 'kraken', market: 'SOLEUR', quote: 'EUR' },
    ];
    for (let i = 0; i < 300; i++) {
      const m = markets[i % markets.length]!;
      // Some trades older than 24 h, which must not count; two trades share a millisecond.
      const ts = i < 20 ? now - 26 * 3_600_000 + i : now - 23 * 3_600_000 + Math.floor(i / 2) * 250_000;
      rows.push(trade({ ...m, asset: 'solana', trade_id: String(1_000 + i), ts, price: 140 + ((i * 37) % 23) / 7, quantity: 0.5 + (i % 9) }));
    }
    // The last 30 s: two markets trade again (in the index price), SOLUSDC stays quiet (stale).
    for (let i = 0; i < 6; i++) {
      const m = markets[i % 2 === 0 ? 0 : 2]!;
      rows.push(trade({ ...m, asset: 'solana', trade_id: String(2_000 + i), ts: now - 30_000 + i * 5_000, price: 141 + i / 8, quantity: 2 }));
    }
    await store.insert('trades', rows);
    await computeIndex(store, now);
  },
});

test('markets of an asset: last price, 24 h volume and share, recomputed from the trades', async () => {
  const lastSecond = Math.floor((now - defaultIndexSchedule.lagMs) / 1000) - 1;
  const lastIndexSecond = referenceTicks(rows, 'solana', Math.floor(now / 1000) - 7 * 86_400, lastSecond, { params: defaultIndexParams }).at(-1)!;
  expect(lastIndexSecond.second).toBe(lastSecond);
  const res = await api.get('/v1/coins/solana/markets');
  expect(res.status).toBe(200);
  const body = res.json as any;
  expect(body.currency).toBe('usd');
  const recent = rows.filter((r) => r.ts >= now - 86_400_000 && r.quote !== 'EUR');
  const byMarket = new Map<string, TradeRow[]>();
  for (const r of recent) byMarket.set(r.market, [...(byMarket.get(r.market) ?? []), r]);
  const total = recent.reduce((s, r) => s + r.price * r.quantity, 0);
  expect(body.markets.map((m: any) => m.pair).sort()).toEqual(['SOL/USD', 'SOL/USDC', 'SOL/USDT']);
  for (const m of body.markets) {
    const trades = byMarket.get(m.pair === 'SOL/USD' ? 'SOL-USD' : `SOL${m.quote}`)!;
    const last = [...trades].sort((a, b) => a.ts - b.ts || (a.trade_id < b.trade_id ? -1 : 1)).at(-1)!;
    const volume = trades.reduce((s, r) => s + r.price * r.quantity, 0);
    expect(m.price).toBe(last.price);
    expect(m.updatedAt).toBe(last.ts);
    expect(Math.abs(m.volume24h / volume - 1)).toBeLessThan(1e-9);
    expect(Math.abs(m.share / (volume / total) - 1)).toBeLessThan(1e-9);
    expect(m).toMatchObject({ contract: 'spot', spreadBps: null, costBuy: null });
    // The index runner's verdict on the market at the last second it computed, recomputed from the trades.
    const verdict = lastIndexSecond.markets.find((v) => v.key === `${m.venueId}:${trades[0]!.market}`)!;
    expect({ excluded: m.excluded, excludeReason: m.excludeReason }).toEqual({ excluded: verdict.reason !== null, excludeReason: verdict.reason });
  }
  expect(body.markets.map((m: any) => [m.pair, m.excludeReason]).sort()).toEqual([
    ['SOL/USD', null],
    ['SOL/USDC', 'stale'],
    ['SOL/USDT', null],
  ]);
  expect(body.markets.find((m: any) => m.venueId === 'binance').venue).toBe('Binance');
  const volumes = body.markets.map((m: any) => m.volume24h);
  expect(volumes).toEqual([...volumes].sort((a: number, b: number) => b - a));
});

test('unknown asset and currency', async () => {
  expect((await api.get('/v1/coins/nope/markets')).status).toBe(404);
  const bad = await api.get('/v1/coins/solana/markets?vs=xau');
  expect(bad.status).toBe(400);
  expect((bad.json as any).error.message).toMatch(/vs/);
});

import { expect, test } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { trade, type TradeRow } from '../../test/support/harness.ts';

// USDT trades at 0.98 USD on its own USD market: the index converts USDT quotes at that measured
// rate, and so must every endpoint that values a USDT amount in USD (not at par).

const now = Date.now();
const usdPerUsdt = 0.98;
const solTrades: TradeRow[] = [];
const close = (actual: number, expected: number) => expect(Math.abs(actual / expected - 1), `${actual} vs ${expected}`).toBeLessThan(1e-9);

const api = useTestApi({
  keyName: 'usd-quote-rates-test',
  seed: async (store) => {
    const rows: TradeRow[] = [];
    // The measured rate: USDT/USD at 0.98 in each of the last 10 minutes (more than the minimum 3).
    for (let i = 0; i < 10; i++) {
      rows.push(trade({ venue: 'bitstamp', market: 'usdtusd', asset: 'tether', quote: 'USD', trade_id: `t${i}`, ts: now - (i + 1) * 60_000, price: usdPerUsdt, quantity: 10_000 + i }));
    }
    for (let i = 0; i < 12; i++) {
      solTrades.push(
        trade({ venue: 'binance', market: 'SOLUSDT', asset: 'solana', quote: 'USDT', trade_id: `u${i}`, ts: now - (i + 1) * 300_000, price: 150 + i / 4, quantity: 1 + i }),
        trade({ venue: 'kraken', market: 'SOLUSD', asset: 'solana', quote: 'USD', trade_id: `d${i}`, ts: now - (i + 1) * 300_000 + 1_000, price: 147 + i / 4, quantity: 2 + i }),
      );
    }
    await store.insert('trades', [...rows, ...solTrades]);
  },
});

const quoteVolume = (market: string) => solTrades.filter((t) => t.market === market).reduce((sum, t) => sum + t.price * t.quantity, 0);
const lastPrice = (market: string) => solTrades.filter((t) => t.market === market).sort((a, b) => b.ts - a.ts)[0]!.price;

test('/v1/coins/{id}/markets values a USDT market at the measured USDT rate, a USD market as is', async () => {
  const res = await api.get('/v1/coins/solana/markets');
  expect(res.status).toBe(200);
  const markets = (res.json as { markets: { pair: string; price: number; volume24h: number; share: number }[] }).markets;
  const usdt = markets.find((m) => m.pair === 'SOL/USDT')!;
  const usd = markets.find((m) => m.pair === 'SOL/USD')!;
  close(usdt.volume24h, quoteVolume('SOLUSDT') * usdPerUsdt);
  close(usdt.price, lastPrice('SOLUSDT') * usdPerUsdt);
  close(usd.volume24h, quoteVolume('SOLUSD'));
  close(usd.price, lastPrice('SOLUSD'));
  close(usdt.share, (quoteVolume('SOLUSDT') * usdPerUsdt) / (quoteVolume('SOLUSDT') * usdPerUsdt + quoteVolume('SOLUSD')));
});

test('/v1/exchanges and /v1/exchanges/{id} value USDT volume at the measured USDT rate', async () => {
  const list = await api.get('/v1/exchanges?limit=100');
  expect(list.status).toBe(200);
  const rows = (list.json as { exchanges: { id: string; volume24h: number }[] }).exchanges;
  close(rows.find((r) => r.id === 'binance')!.volume24h, quoteVolume('SOLUSDT') * usdPerUsdt);
  close(rows.find((r) => r.id === 'kraken')!.volume24h, quoteVolume('SOLUSD'));

  const one = await api.get('/v1/exchanges/binance');
  expect(one.status).toBe(200);
  const exchange = (one.json as { exchange: { volume24h: number; markets: { market: string; price: number; volume24h: number }[] } }).exchange;
  close(exchange.volume24h, quoteVolume('SOLUSDT') * usdPerUsdt);
  const market = exchange.markets.find((m) => m.market === 'SOLUSDT')!;
  close(market.volume24h, quoteVolume('SOLUSDT') * usdPerUsdt);
  // The per-market price stays in its quote currency (its `quote` says which).
  close(market.price, lastPrice('SOLUSDT'));
});

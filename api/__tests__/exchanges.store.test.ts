import { expect, test } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { get, trade, type TradeRow } from '../../test/support/harness.ts';
import { landingStore } from './landingStore.ts';

const now = Date.now();
const day = 86_400_000;
const rows: TradeRow[] = [];

const api = useTestApi({
  keyName: 'exchanges-test',
  seed: async (store) => {
    const markets = [
      { venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT' },
      { venue: 'binance', market: 'ETHUSDC', asset: 'ethereum', quote: 'USDC' },
      // Not valued in USD yet, and a venue outside the catalog: neither counts.
      { venue: 'binance', market: 'ETHBTC', asset: 'ethereum', quote: 'BTC' },
      { venue: 'elsewhere', market: 'BTC-USD', asset: 'bitcoin', quote: 'USD' },
    ];
    for (let i = 0; i < 200; i++) {
      const m = markets[i % markets.length]!;
      // Two days of history: the older half feeds only the daily volume history.
      const ts = now - 2 * day + 60_000 + i * Math.floor((2 * day - 120_000) / 200);
      // None near the 24 h boundary, which moves with the time of each request.
      if (Math.abs(ts - (now - day)) < 10 * 60_000) continue;
      rows.push(trade({ ...m, trade_id: String(i), ts, price: 100 + (i % 13), quantity: 1 + (i % 5) }));
    }
    await store.insert('trades', rows);
  },
});

const binanceUsd = () => rows.filter((r) => r.venue === 'binance' && r.quote !== 'BTC');
const inWindow = (r: TradeRow) => r.ts >= now - day;

test('the exchange list: catalog venues with their 24 h markets, trades and USD volume', async () => {
  const res = await api.get('/v1/exchanges');
  expect(res.status).toBe(200);
  const body = res.json as any;
  expect(body).toMatchObject({ page: 1, limit: 100, offset: 0 });
  // Every catalog venue is listed; only binance traded.
  expect(body.exchanges[0].id).toBe('binance');
  for (const e of body.exchanges.slice(1)) expect(e, e.id).toMatchObject({ marketCount: 0, trades24h: 0, volume24h: 0 });
  const recent = binanceUsd().filter(inWindow);
  const [binance] = body.exchanges;
  expect(binance).toMatchObject({ name: 'Binance', contract: 'spot', marketCount: 2, trades24h: recent.length });
  expect(Math.abs(binance.volume24h / recent.reduce((s, r) => s + r.price * r.quantity, 0) - 1)).toBeLessThan(1e-9);
});

test('pagination: page, offset wins over page, and bad values are refused', async () => {
  const second = ((await api.get('/v1/exchanges?limit=2')).json as any).exchanges[1].id;
  expect((await api.get('/v1/exchanges?limit=1&page=2')).json).toMatchObject({ exchanges: [{ id: second }], page: 2, limit: 1, offset: 1 });
  expect((await api.get('/v1/exchanges?limit=1&page=2&offset=0')).json).toMatchObject({ page: 1, offset: 0, exchanges: [{ id: 'binance' }] });
  for (const bad of ['limit=0', 'limit=101', 'page=0', 'page=abc', 'offset=-1']) {
    const res = await api.get(`/v1/exchanges?${bad}`);
    expect(res.status, bad).toBe(400);
    expect((res.json as any).error.message).toContain(bad.split('=')[0]);
  }
});

test('one exchange: its markets and daily volume history, recomputed from the trades', async () => {
  const body = (await api.get('/v1/exchanges/binance')).json as any;
  const recent = binanceUsd().filter(inWindow);
  expect(body.exchange.markets.map((m: any) => m.pair).sort()).toEqual(['BTC/USDT', 'ETH/USDC']);
  for (const m of body.exchange.markets) {
    const mine = recent.filter((r) => r.market === m.market);
    const last = [...mine].sort((a, b) => a.ts - b.ts).at(-1)!;
    expect(m).toMatchObject({ price: last.price, trades24h: mine.length });
    expect(Math.abs(m.volume24h / mine.reduce((s, r) => s + r.price * r.quantity, 0) - 1)).toBeLessThan(1e-9);
  }
  const byDay = new Map<string, number>();
  for (const r of binanceUsd()) {
    const d = new Date(r.ts).toISOString().slice(0, 10);
    byDay.set(d, (byDay.get(d) ?? 0) + r.price * r.quantity);
  }
  expect(body.exchange.volumeHistory.map((h: any) => h.date)).toEqual([...byDay.keys()].sort());
  for (const h of body.exchange.volumeHistory) expect(Math.abs(h.volume / byDay.get(h.date)! - 1)).toBeLessThan(1e-9);
  expect((await api.get('/v1/exchanges/nowhere')).status).toBe(404);
});

test('one exchange while trades land: its row is the sum of the markets it serves (one read)', async () => {
  // The real store, with a binance trade landing before every read the route makes: as if the
  // collectors wrote between its queries. Two reads of the same figures would then disagree.
  const writing = landingStore(api.store, (n) =>
    api.store.insert('trades', [trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: `landing-${n}`, ts: Date.now() - 60_000, price: 100, quantity: 1 })]),
  );
  const server = await api.serve({ store: writing.store });
  const body = (await get(`${server.url}/v1/exchanges/binance`, { 'x-api-key': api.key })).json as any;
  expect(writing.landed()).toBeGreaterThan(1);
  const { exchange } = body;
  expect(exchange.marketCount).toBe(exchange.markets.length);
  expect(exchange.trades24h).toBe(exchange.markets.reduce((n: number, m: any) => n + m.trades24h, 0));
  expect(Math.abs(exchange.volume24h / exchange.markets.reduce((s: number, m: any) => s + m.volume24h, 0) - 1)).toBeLessThan(1e-12);
  // And the figures are the store's: every trade of the window, the landed ones among them.
  const btc = exchange.markets.find((m: any) => m.market === 'BTCUSDT');
  expect(btc.trades24h).toBeGreaterThan(binanceUsd().filter((r) => inWindow(r) && r.market === 'BTCUSDT').length);
  await server.close();
});

// History by range: time of GET /v1/coins/bitcoin/ohlc?interval=1h&from=&to= over a year (8,760
// candles, read from candles_1h), usd and eur (each candle at its own bucket's rate), every request
// a cache miss (each asks a range shifted by one hour). Target: median well under 100 ms.
// A year of SIMULATED trades on four markets (one every 10 min each) in an embedded chDB store.
// Usage: node test/bench/ohlcRange.bench.ts [requests]   (default 40 per currency)
import { KeyStore } from '../../api/keys.ts';
import { loadBucketRates } from '../../api/read/bucketRates.ts';
import { loadCandleRange } from '../../api/routes/ohlc.ts';
import { startApi } from '../../api/server.ts';
import { get, openTestStore, silentLog, testConfig, trade, type TradeRow } from '../support/harness.ts';

const requests = Number(process.argv[2] ?? 40);
const hour = 3_600_000;
const day = 24 * hour;
const now = Math.floor(Date.now() / hour) * hour;
const start = now - 400 * day;

const env = await openTestStore();
const markets = [
  ['coinbase', 'BTC-USD', 'USD', 1],
  ['binance', 'BTCUSDT', 'USDT', 1],
  ['kraken', 'XBTUSD', 'USD', 1],
  ['kraken', 'XBTEUR', 'EUR', 0.9],
] as const;
let batch: TradeRow[] = [];
let n = 0;
for (let ts = start; ts < now; ts += 600_000) {
  const price = 60_000 + 10_000 * Math.sin(ts / (30 * day));
  for (const [venue, market, quote, perUsd] of markets) {
    batch.push(trade({ venue, market, asset: 'bitcoin', quote, trade_id: String(n++), ts: ts + n % 7_000, price: price * perUsd, quantity: 0.5 }));
  }
  if (batch.length >= 50_000) {
    await env.store.insert('trades', batch);
    batch = [];
  }
}
await env.store.insert('trades', batch);
await env.store.insert('fx_reference_rates', [{ date: new Date(start).toISOString().slice(0, 10), currency: 'eur', per_usd: 0.92, source: 'bench', imported_at: now }]);
const { key } = await new KeyStore(env.store).create('bench');
const api = await startApi({ store: env.store, config: testConfig(), log: silentLog });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;
for (const vs of ['usd', 'eur']) {
  const times: number[] = [];
  let candles = 0;
  for (let i = 0; i < requests; i++) {
    const to = now - i * hour;
    const began = performance.now();
    // Uncompressed: compression is per client and size, not part of reading a range.
    const res = await get(`${api.url}/v1/coins/bitcoin/ohlc?interval=1h&from=${to - 365 * day}&to=${to}&vs=${vs}`, { 'x-api-key': key, 'accept-encoding': 'identity' });
    times.push(performance.now() - began);
    if (res.status !== 200) throw new Error(`status ${res.status}: ${res.text}`);
    candles = (res.json as { candles: unknown[] }).candles.length;
  }
  console.log(`ohlc 1h over a year, vs=${vs}: ${candles} candles, ${requests} cache misses, median ${median(times).toFixed(1)} ms, p95 ${p95(times).toFixed(1)} ms (${n} trades stored)`);
}
// The same reads without HTTP, JSON and compression: where the time goes.
const reads: number[] = [];
const rates: number[] = [];
for (let i = 0; i < requests; i++) {
  const to = now - i * hour - 7 * day;
  let began = performance.now();
  await loadCandleRange(env.store, 'bitcoin', '1h', to - 365 * day, to, Date.now());
  reads.push(performance.now() - began);
  began = performance.now();
  await loadBucketRates(env.store, 'eur', 'candles_1h', to - 365 * day, to);
  rates.push(performance.now() - began);
}
console.log(`  of which the candle read: median ${median(reads).toFixed(1)} ms, p95 ${p95(reads).toFixed(1)} ms; the eur rates read: median ${median(rates).toFixed(1)} ms, p95 ${p95(rates).toFixed(1)} ms`);
await api.close();
await env.dispose();

import { describe, expect, test, vi } from 'vitest';
import { parseFxReferenceCsv, importFxReference } from '../../aggregate/jobs/fxReference.ts';
import { fiatCurrencies, servedCurrencies } from '../../aggregate/currency/currencies.ts';
import { loadStablecoinRates } from '../../aggregate/currency/fxMeasured.ts';
import { loadUsdRates } from '../../aggregate/currency/usdRates.ts';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import { referenceTicks } from '../../aggregate/__tests__/indexReference.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, trade, type TradeRow } from '../../test/support/harness.ts';
import { measuredPerUsd, quoteUsdPer, type ReferenceRateRow } from '../../test/support/fxReference.ts';

const minute = 60_000;
const close = (a: number, b: number) => expect(Math.abs(a / b - 1), `${a} vs ${b}`).toBeLessThan(1e-9);

// Rates asked at a fixed past time T, far from the trades the HTTP tests insert around now.
const T = Date.parse('2026-06-10T12:00:30Z');
const now = Date.now();
// The clock stands still in this file (for the API too), so the gapless candles end at a known interval.
vi.useFakeTimers({ toFake: ['Date'], now });

/** Reference rates: an older day, the latest day before T, a day after T (must not be used at T), and today for the HTTP tests. */
const referenceCsv = [
  '# source: test-ecb',
  'Date,USD,GBP,JPY,CHF,',
  `${new Date(now - 86_400_000).toISOString().slice(0, 10)},1.16,0.88,180,0.93,`,
  '2026-06-11,1.5,0.9,170,0.95,',
  '2026-06-09,1.25,0.875,150,0.94,',
  '2026-06-01,1.2,0.86,160,0.96,',
].join('\n');

/** The reference file read by hand: its columns are units per EUR, so units per USD = column / USD column. */
const referenceRows: ReferenceRateRow[] = referenceCsv
  .split('\n')
  .filter((line) => /^\d{4}-/.test(line))
  .flatMap((line) => {
    const [date, usd, gbp, jpy, chf] = line.split(',').map((cell, i) => (i === 0 ? cell : Number(cell))) as [string, number, number, number, number];
    return ([['eur', 1], ['gbp', gbp], ['jpy', jpy], ['chf', chf]] as const).map(([currency, perEur]) => ({ date, currency, per_usd: perEur / usd }));
  });

/** One trade per entry; ids unique per market. */
let tradeSeq = 0;
function at(ts: number, venue: string, market: string, asset: string, quote: string, price: number, quantity: number): TradeRow {
  return trade({ venue, market, asset, quote, trade_id: String(tradeSeq++), ts, price, quantity });
}

// Measured EUR at T. kraken lists BTC/EUR and BTC/USD, bitstamp USDT/EUR and USDT/USD; each minute
// both legs trade on the same venue. Distractors: a BTC/EUR minute without BTC/USD on kraken, BTC/EUR
// on a venue whose only USD leg is a stablecoin, trades before the window, GBP in only two minutes.
const minuteStart = Math.floor(T / minute) * minute;
const measuredTrades: TradeRow[] = [];
for (let i = 0; i < 5; i++) {
  const m = minuteStart - i * minute + 5_000;
  measuredTrades.push(
    at(m, 'kraken', 'XBTUSD', 'bitcoin', 'USD', 100_000 + i * 10, 0.5),
    at(m + 1_000, 'kraken', 'XBTUSD', 'bitcoin', 'USD', 100_050 + i * 10, 0.25),
    at(m + 2_000, 'kraken', 'XBTEUR', 'bitcoin', 'EUR', 86_000 + i * 37, 0.1 + i / 10),
    at(m + 3_000, 'kraken', 'XBTEUR', 'bitcoin', 'EUR', 86_100 + i * 11, 0.2),
    at(m + 4_000, 'bitstamp', 'usdtusd', 'tether', 'USD', 1.0002, 50_000),
    at(m + 5_000, 'bitstamp', 'usdteur', 'tether', 'EUR', 0.861 + i / 1000, 20_000 + i * 1_000),
  );
}
measuredTrades.push(
  at(minuteStart - 7 * minute, 'kraken', 'XBTEUR', 'bitcoin', 'EUR', 50_000, 3),
  at(minuteStart - 2 * minute, 'binance', 'BTCEUR', 'bitcoin', 'EUR', 70_000, 1),
  at(minuteStart - 2 * minute, 'binance', 'BTCUSDT', 'bitcoin', 'USDT', 100_000, 1),
  at(minuteStart - 70 * minute, 'kraken', 'XBTUSD', 'bitcoin', 'USD', 100_000, 1),
  at(minuteStart - 70 * minute, 'kraken', 'XBTEUR', 'bitcoin', 'EUR', 60_000, 1),
  at(minuteStart - 3 * minute, 'kraken', 'XBTGBP', 'bitcoin', 'GBP', 76_000, 1),
  at(minuteStart - 4 * minute, 'kraken', 'XBTGBP', 'bitcoin', 'GBP', 76_000, 1),
);

/** How far back each computeIndex call of this file starts: less than one of its steps, so every second uses the FX rates of that step's end. */
const indexSinceMs = 3 * 3_600_000;

/**
 * The index price as computeIndex(store, computedAt, indexSinceMs) left it, recomputed from the
 * trades (aggregate/__tests__/indexReference.ts) with the FX and stablecoin rates at the end of
 * the computed seconds, the ones the runner applies, themselves recomputed from every stored trade
 * and the reference file (test/support/fxReference.ts).
 */
function expectedIndexPrice(trades: TradeRow[], asset: string, computedAt: number): number {
  const lastSecond = Math.floor((computedAt - defaultIndexSchedule.lagMs) / 1000) - 1;
  const usdPer = quoteUsdPer([...measuredTrades, ...liveTrades], referenceRows, (lastSecond + 1) * 1000);
  const ticks = referenceTicks(trades, asset, Math.floor((computedAt - indexSinceMs) / 1000), lastSecond, { params: defaultIndexParams, usdPer });
  expect(ticks.at(-1)?.second).toBe(lastSecond);
  return ticks.at(-1)!.price;
}

// Around now, for the HTTP tests: solana on two index markets, bitcoin (for vs=btc) on two.
const liveTrades: TradeRow[] = [];
for (let i = 0; i < 40; i++) {
  const ts = now - 30 * minute + i * 37_000;
  liveTrades.push(at(ts, 'binance', 'SOLUSDT', 'solana', 'USDT', 140 + ((i * 13) % 17) / 4, 1 + (i % 5)));
  liveTrades.push(at(ts + 500, 'coinbase', 'SOL-USD', 'solana', 'USD', 141 + ((i * 7) % 11) / 4, 2 + (i % 3)));
}
for (let i = 0; i < 6; i++) {
  const ts = now - 6 * minute + i * 50_000;
  liveTrades.push(at(ts, 'binance', 'BTCUSDT', 'bitcoin', 'USDT', 95_000 + i * 25, 0.125 * (i + 1)));
  liveTrades.push(at(ts + 200, 'coinbase', 'BTC-USD', 'bitcoin', 'USD', 95_010 + i * 25, 0.25));
}

const api = useTestApi({
  keyName: 'currency-test',
  seed: async (store) => {
    await store.insert('trades', [...measuredTrades, ...liveTrades]);
    await importFxReference(store, parseFxReferenceCsv(referenceCsv, 'test.csv'), now);
    await computeIndex(store, T + 2_500, indexSinceMs);
    await computeIndex(store, now, indexSinceMs);
  },
});

describe('loadUsdRates', () => {
  test('serves 30 fiat currencies and btc, eth', () => {
    expect(fiatCurrencies).toHaveLength(30);
    expect(new Set(servedCurrencies).size).toBe(32);
    expect(servedCurrencies.slice(-2)).toEqual(['btc', 'eth']);
  });

  test('measured fiat wins over the reference, which wins over nothing', async () => {
    const rates = await loadUsdRates(api.store, T);
    expect(rates.perUsd('usd')).toBe(1);

    const eur = measuredPerUsd(measuredTrades, 'EUR', T)!;
    // kraken's five minutes and bitstamp's five: the binance minute has no USD leg and the 70-minute-old pair is outside the window.
    expect(eur).toMatchObject({ minutes: 10, venues: ['bitstamp', 'kraken'] });
    close(rates.perUsd('eur')!, eur.perUsd);
    expect(rates.source('eur')).toBe('measured:bitstamp,kraken EUR/USD cross, 10 min');

    // GBP traded against USD in only two minutes: fewer than minMinutes, so the reference of the latest day on or before T.
    expect(measuredPerUsd(measuredTrades, 'GBP', T)).toBeUndefined();
    close(rates.perUsd('gbp')!, 0.875 / 1.25);
    expect(rates.source('gbp')).toBe('reference:test-ecb 2026-06-09');
    close(rates.perUsd('jpy')!, 150 / 1.25);

    // No measured pair and no reference column: no rate.
    expect(rates.perUsd('vnd')).toBeUndefined();
    expect(rates.source('vnd')).toBeUndefined();
  });

  test('before any reference day there is no reference rate, and outside the window no measured one', async () => {
    const rates = await loadUsdRates(api.store, Date.parse('2026-05-31T12:00:00Z'));
    expect(rates.perUsd('gbp')).toBeUndefined();
    expect(rates.perUsd('eur')).toBeUndefined();
    const later = await loadUsdRates(api.store, Date.parse('2026-06-10T23:00:00Z'));
    // 11 hours after the trades: EUR falls back to the reference (1 / USD per EUR).
    close(later.perUsd('eur')!, 1 / 1.25);
    expect(later.source('eur')).toBe('reference:test-ecb 2026-06-09');
  });

  test('btc and eth are 1 / our index price, when we have one', async () => {
    const rates = await loadUsdRates(api.store, T);
    close(rates.perUsd('btc')!, 1 / expectedIndexPrice(measuredTrades, 'bitcoin', T + 2_500));
    expect(rates.source('btc')).toMatch(/^index:bitcoin 2026-06-10T12:00:0\dZ$/);
    expect(rates.perUsd('eth')).toBeUndefined();
    // More than 48 h after the last bitcoin trade of that day.
    expect((await loadUsdRates(api.store, T + 3 * 86_400_000)).perUsd('btc')).toBeUndefined();
  });

  test('stablecoins: measured from their USD markets, else at par', async () => {
    const rates = await loadStablecoinRates(api.store, T);
    const usdt = measuredTrades.filter((t) => t.asset === 'tether' && t.quote === 'USD' && t.ts <= T);
    close(rates.tether.usdPer, usdt.reduce((s, t) => s + t.price * t.quantity, 0) / usdt.reduce((s, t) => s + t.quantity, 0));
    expect(rates.tether.source).toBe('measured:bitstamp USDT/USD');
    expect(rates['usd-coin']).toEqual({ usdPer: 1, source: 'par' });
    expect((await loadStablecoinRates(api.store, T + 2 * 3_600_000)).tether).toEqual({ usdPer: 1, source: 'par' });
  });
});

describe('endpoints in other currencies', () => {
  const eurPerUsd = 1 / 1.16;

  test('ohlc in eur: candles recomputed from the trades times the imported rate', async () => {
    const res = await api.get('/v1/coins/solana/ohlc?interval=5m&vs=eur');
    expect(res.status).toBe(200);
    const body = res.json as { candles: { timestamp: number; open: number; high: number; low: number; close: number; volume: number }[]; source: string; rate: number; currency: string };
    close(body.rate, eurPerUsd);
    expect(body.currency).toBe('eur');
    expect(body.source).toBe(`mds:trades; eur rate: reference:test-ecb ${new Date(now - 86_400_000).toISOString().slice(0, 10)}`);

    const sol = liveTrades.filter((t) => t.asset === 'solana').sort((a, b) => a.ts - b.ts || Number(a.trade_id) - Number(b.trade_id));
    const buckets = new Map<number, TradeRow[]>();
    for (const t of sol) {
      const b = t.ts - (t.ts % (5 * minute));
      buckets.set(b, [...(buckets.get(b) ?? []), t]);
    }
    const expected = [...buckets.entries()].sort(([a], [b]) => a - b);
    // Gapless up to the interval that holds now: the tail repeats the last close with volume 0.
    const tail = body.candles.slice(expected.length);
    expect(tail.length).toBe((now - (now % (5 * minute)) - expected.at(-1)![0]) / (5 * minute));
    for (const [i, c] of tail.entries()) {
      const last = expected.at(-1)![1].at(-1)!.price * eurPerUsd;
      expect(c.timestamp).toBe(expected.at(-1)![0] + (i + 1) * 5 * minute);
      for (const price of [c.open, c.high, c.low, c.close]) close(price, last);
      expect(c.volume).toBe(0);
    }
    body.candles.slice(0, expected.length).forEach((c, i) => {
      const [timestamp, trades] = expected[i]!;
      expect(c.timestamp).toBe(timestamp);
      close(c.open, trades[0]!.price * eurPerUsd);
      close(c.close, trades.at(-1)!.price * eurPerUsd);
      close(c.high, Math.max(...trades.map((t) => t.price)) * eurPerUsd);
      close(c.low, Math.min(...trades.map((t) => t.price)) * eurPerUsd);
      // Base units: not converted.
      close(c.volume, trades.reduce((s, t) => s + t.quantity, 0));
    });

    const usd = (await api.get('/v1/coins/solana/ohlc?interval=5m')).json as typeof body;
    expect(usd.rate).toBe(1);
    expect(usd.candles[0]!.open).toBe(expected[0]![1][0]!.price);
  });

  test('markets in btc: money fields times 1 / the bitcoin index, units that are not money unchanged', async () => {
    const qualityTs = Date.now();
    await api.store.insert('market_quality', [
      {
        asset: 'solana', venue: 'binance', market: 'SOLUSDT', quote: 'USDT', ts: qualityTs, spread_bps: 1.5,
        depth_bid_2: 2_000_000, depth_ask_2: 1_800_000, depth_bid_1: 900_000, depth_ask_1: 800_000,
        cost_buy: { '10000': 0.8, '100000': 3.2, '1000000': null }, cost_sell: { '10000': 0.9, '100000': 3.5, '1000000': null },
      },
    ]);
    const res = await api.get('/v1/coins/solana/markets?vs=btc');
    expect(res.status).toBe(200);
    const body = res.json as any;
    const btcPerUsd = 1 / expectedIndexPrice(liveTrades, 'bitcoin', now);
    close(body.rate, btcPerUsd);
    expect(body.currency).toBe('btc');
    expect(body.rateSource).toMatch(/^index:bitcoin \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const sol = liveTrades.filter((t) => t.asset === 'solana');
    const total = sol.reduce((s, t) => s + t.price * t.quantity, 0);
    expect(body.markets).toHaveLength(2);
    for (const m of body.markets) {
      const own = sol.filter((t) => t.market === (m.quote === 'USD' ? 'SOL-USD' : 'SOLUSDT'));
      const volume = own.reduce((s, t) => s + t.price * t.quantity, 0);
      close(m.price, own.at(-1)!.price * btcPerUsd);
      close(m.volume24h, volume * btcPerUsd);
      close(m.share, volume / total);
    }
    const binance = body.markets.find((m: any) => m.venueId === 'binance');
    expect(binance.spreadBps).toBe(1.5);
    close(binance.depthBid, 2_000_000 * btcPerUsd);
    close(binance.depthAsk, 1_800_000 * btcPerUsd);
    close(binance.depthBid1, 900_000 * btcPerUsd);
    close(binance.depthAsk1, 800_000 * btcPerUsd);
    // Cost to trade: bps per order size in USD; neither is money in the served currency. A size the book cannot fill is left out.
    expect(binance.costBuy).toEqual({ '10000': 0.8, '100000': 3.2 });
    expect(body.markets.find((m: any) => m.venueId === 'coinbase').depthBid).toBeNull();
  });

  test.each([
    ['/v1/coins/solana/ohlc?vs=vnd', 'vnd'],
    ['/v1/coins/solana/markets?vs=vnd', 'vnd'],
    ['/v1/coins/solana/ohlc?vs=eth', 'eth'],
    ['/v1/coins/solana/markets?vs=eth', 'eth'],
  ])('%s: 503 unavailable naming the currency when no rate is known', async (url, currency) => {
    const res = await api.get(url);
    expect(res.status).toBe(503);
    const { error } = res.json as { error: { code: string; message: string; status: number } };
    expect(error).toMatchObject({ code: 'unavailable', status: 503 });
    expect(error.message).toContain(`vs=${currency}`);
  });

  test('an unknown currency is a 400 listing every served one', async () => {
    const res = await api.get('/v1/coins/solana/ohlc?vs=xau');
    expect(res.status).toBe(400);
    const { message } = (res.json as { error: { message: string } }).error;
    for (const c of servedCurrencies) expect(message).toContain(c);
  });
});

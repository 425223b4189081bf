// Reads whose cost grows while their windows fill. The latest index prices (/v1/prices, and the
// API's market snapshot, rebuilt every 5 s while asked) look back 48 h: over every index row of them
// when no 10-minute summary is written (index_summary_10m), over the summaries and a few buckets of
// rows when they are. Those rows come from index_ticks_by_time (sorted by time); the same read with
// them taken from index_ticks (sorted by asset, as before migration 0300) is timed as its baseline.
// A live index step that enters a new minute reads the 24-hour windows of every
// market from the 1m candles. The universe demo starts with a thin day of history, so a run of a few
// hours measures them with their windows mostly empty. This bench fills index_ticks and candles_1m
// of an embedded store at the universe demo's pace (rows a minute: --index-rows-per-minute,
// --candles-per-minute) for the first of --hours, times the prices without summaries, writes the
// summaries of every bucket filled but the last (as the index runner would have, and as its start
// writes those of 48 h again), times the prices again and the windows, fills back further to the
// next, and so on; each time is printed with its ratio to a baseline measured in the same run (the
// first fill's; for the prices with summaries, the same fill's without). The asset market rows (the
// API snapshot's other read: 24 h of 1m candles, 31 days of 1h, 395 of 1d) are timed at each fill,
// and once more after hourly candles are filled back 31 days and daily ones 395, read whole and as
// the API's snapshots read them, the long windows once an hour (assetLongWindows.ts).
//   node test/bench/windowFill.bench.ts [--assets 4500] [--markets 7800] [--index-rows-per-minute 17000] [--candles-per-minute 5600] [--hours 1,6,24,48] [--runs 5]
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { latestIndexPriceParams, latestIndexPrices } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { loadIndexInputs } from '../../aggregate/indexInputs.ts';
import { IndexSummaryWrites, summaryBucketSeconds } from '../../aggregate/indexPrices/indexSummary.ts';
import { loadAssetMarketRows } from '../../api/read/assetMarket.ts';
import { LongWindowCache } from '../../api/read/assetLongWindows.ts';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import type { Store } from '../../infra/store.ts';
import { openTestStore } from '../support/harness.ts';

const { values } = parseArgs({
  options: {
    assets: { type: 'string', default: '4500' },
    markets: { type: 'string', default: '7800' },
    'index-rows-per-minute': { type: 'string', default: '17000' },
    'candles-per-minute': { type: 'string', default: '5600' },
    hours: { type: 'string', default: '1,6,24,48' },
    runs: { type: 'string', default: '5' },
  },
});
const assets = Number(values.assets);
const markets = Number(values.markets);
const indexRowsPerMinute = Number(values['index-rows-per-minute']);
const candlesPerMinute = Number(values['candles-per-minute']);
const runs = Number(values.runs);
const fills = values.hours.split(',').map(Number);
for (const [name, value] of Object.entries({ assets, markets, 'index-rows-per-minute': indexRowsPerMinute, 'candles-per-minute': candlesPerMinute, runs })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number of 1 or more`);
}
if (fills.length === 0 || fills.some((h, i) => !Number.isInteger(h) || h < 1 || (i > 0 && h <= fills[i - 1]!))) throw new Error(`--hours must be whole hours, rising: ${values.hours}`);

/** Index rows of one hour: each a second of one asset, the assets in turn (as many as the demo prices). */
const indexHourSql = `
INSERT INTO index_ticks (asset, second, price, status, constituents, excluded, volume, volume_usd, trade_count, last_trade_at, computed_at)
SELECT
    concat('fill-', toString(number % {assets:UInt32})) AS asset,
    toDateTime({from_s:UInt32} + intDiv(number * 60, {per_minute:UInt32}), 'UTC') AS second,
    100 + (number % 997) / 100 AS price,
    'ok' AS status,
    ['fill:M'] AS constituents,
    map() AS excluded,
    1 AS volume,
    100 AS volume_usd,
    1 AS trade_count,
    toDateTime64(second, 3, 'UTC') AS last_trade_at,
    toDateTime64({computed_s:UInt32}, 3, 'UTC') AS computed_at
FROM numbers({rows:UInt64})`;

/**
 * Candles of `table` from {from_s} on, a bucket every {step_s}: in each, {per_bucket} markets
 * traded, the markets in turn ({rows} candles in all).
 */
const candlesSql = (table: 'candles_1m' | 'candles_1h' | 'candles_1d') => `
INSERT INTO ${table} (asset, bucket, venue, market, quote, open, high, low, close, volume, quote_volume, trade_count)
SELECT asset, bucket, 'fill' AS venue, market, 'USD' AS quote,
    argMinState(p, (t, '')), max(p), min(p), argMaxState(p, (t, '')), sum(1.0), sum(p), sum(toUInt64(3))
FROM
(
    SELECT
        concat('fill-', toString((number % {markets:UInt32}) % {assets:UInt32})) AS asset,
        concat('M', toString(number % {markets:UInt32})) AS market,
        toDateTime({from_s:UInt32} + {step_s:UInt32} * intDiv(number, {per_bucket:UInt32}), 'UTC') AS bucket,
        toDateTime64(bucket, 3, 'UTC') AS t,
        100 + (number % 997) / 100 AS p
    FROM numbers({rows:UInt64})
)
GROUP BY asset, bucket, venue, market, quote`;

/** Every market's candle of each bucket of `stepS` from `from` up to `to`. */
async function fillLongCandles(store: Store, table: 'candles_1h' | 'candles_1d', stepS: number, from: number, to: number): Promise<void> {
  const buckets = Math.floor((to - from) / stepS);
  await store.client.command({ query: candlesSql(table), query_params: { assets, markets, from_s: from, step_s: stepS, per_bucket: markets, rows: buckets * markets } });
}

async function fillHour(store: Store, hourStart: number, computedS: number): Promise<void> {
  await store.client.command({ query: indexHourSql, query_params: { assets, from_s: hourStart, per_minute: indexRowsPerMinute, computed_s: computedS, rows: indexRowsPerMinute * 60 } });
  await store.client.command({ query: candlesSql('candles_1m'), query_params: { assets, markets, from_s: hourStart, step_s: 60, per_bucket: candlesPerMinute, rows: candlesPerMinute * 60 } });
}

/**
 * latestIndexPrices.sql with its rows read from index_ticks (through index_price_history) instead of
 * index_ticks_by_time: the read before migration 0300, a baseline for the one that replaced it.
 */
const rowsFromCopy = readFileSync(new URL('../../aggregate/indexPrices/latestIndexPrices.sql', import.meta.url), 'utf8');
const rowsFromIndexTicks = rowsFromIndexTicksSql(rowsFromCopy);
function rowsFromIndexTicksSql(sql: string): string {
  const byTime = "FROM index_ticks_by_time FINAL\n        WHERE asset IN {assets:Array(String)} AND status != 'none'";
  if (!sql.includes(byTime)) throw new Error('latestIndexPrices.sql no longer reads its rows as this bench expects: update rowsFromIndexTicksSql');
  return sql.replace(byTime, 'FROM index_price_history\n        WHERE asset IN {assets:Array(String)}');
}

/** min and median of `runs` timed calls, ms, and what the last call returned. */
async function timed<T>(call: () => Promise<T>): Promise<{ min: number; median: number; last: T }> {
  const ms: number[] = [];
  let last!: T;
  for (let i = 0; i < runs; i++) {
    const began = performance.now();
    last = await call();
    ms.push(performance.now() - began);
  }
  ms.sort((a, b) => a - b);
  return { min: ms[0]!, median: ms[Math.floor(ms.length / 2)]!, last };
}

const env = await openTestStore();
const hourS = 3600;
// The store's "now": every fill ends at it, every read is made at it.
const nowS = Math.floor(Date.now() / 1000 / hourS) * hourS;
const assetIds = Array.from({ length: assets }, (_, i) => `fill-${i}`);
// A live step 20 s into a minute: its range's first minute is the one the windows are read for.
const range = { from: nowS - 40, to: nowS - 30, keepAt: nowS - 40 };
let filled = 0;
const baseline: { prices?: number; windows?: number; market?: number } = {};
const round = (v: number) => v.toFixed(0);
try {
  console.log(`window fill: ${assets} assets, ${markets} markets; an hour is ${indexRowsPerMinute * 60} index rows and ${candlesPerMinute * 60} 1m candles; ${runs} runs per read, min / median`);
  for (const hours of fills) {
    const began = performance.now();
    for (; filled < hours; filled++) await fillHour(env.store, nowS - (filled + 1) * hourS, nowS);
    const fillS = (performance.now() - began) / 1000;
    await env.store.client.command({ query: 'TRUNCATE TABLE index_summary_10m' });
    const rowsOnly = await timed(() => latestIndexPrices(env.store, assetIds, nowS * 1000));
    const summarising = performance.now();
    const summaries = new IndexSummaryWrites();
    summaries.note(nowS - hours * hourS, nowS - 1);
    const buckets = await summaries.write(env.store, nowS - summaryBucketSeconds);
    const summariesS = (performance.now() - summarising) / 1000;
    const prices = await timed(() => latestIndexPrices(env.store, assetIds, nowS * 1000));
    // Fast and wrong would be no gain: both reads give the same prices.
    if (!isDeepStrictEqual(prices.last, rowsOnly.last)) throw new Error(`${hours} h: the prices read with summaries differ from those read from the rows`);
    const params = latestIndexPriceParams(assetIds, nowS * 1000);
    // The disk's free space is read with the prices: it differs from one read to the next.
    const byAsset = (rows: { asset: string; storeFreeBytes?: number }[]) => rows.map(({ storeFreeBytes: _, ...r }) => r).sort((a, b) => a.asset.localeCompare(b.asset));
    const fromTicks = await timed(async () => byAsset(await env.store.rows<{ asset: string }>(rowsFromIndexTicks, params)));
    const fromCopy = byAsset(await env.store.rows<{ asset: string }>(rowsFromCopy, params));
    if (!isDeepStrictEqual(fromTicks.last, fromCopy)) throw new Error(`${hours} h: the prices with rows from index_ticks differ from those with rows from index_ticks_by_time`);
    const windows = await timed(() => loadIndexInputs(env.store, range, defaultIndexParams));
    const market = await timed(() => loadAssetMarketRows(env.store, assetIds, nowS * 1000));
    baseline.prices ??= rowsOnly.median;
    baseline.windows ??= windows.median;
    baseline.market ??= market.median;
    console.log(`  ${hours} h filled (in ${fillS.toFixed(0)} s), the summaries of its ${buckets} buckets but the last written in ${summariesS.toFixed(1)} s`);
    console.log(`    latest index prices of ${prices.last.size} assets, rows only: ${round(rowsOnly.min)} / ${round(rowsOnly.median)} ms (${(rowsOnly.median / baseline.prices).toFixed(1)}x the first fill's)`);
    console.log(`    latest index prices, with summaries, rows from index_ticks (before 0300): ${round(fromTicks.min)} / ${round(fromTicks.median)} ms`);
    console.log(`    latest index prices, with summaries: ${round(prices.min)} / ${round(prices.median)} ms (${(prices.median / rowsOnly.median).toFixed(2)}x rows only, ${(prices.median / fromTicks.median).toFixed(2)}x rows from index_ticks)`);
    console.log(`    a live step's inputs at a new minute, ${windows.last.windows.length} markets' windows: ${round(windows.min)} / ${round(windows.median)} ms (${(windows.median / baseline.windows).toFixed(1)}x the first fill's)`);
    console.log(`    the asset market rows (assetMarket.sql, 24 h of 1m candles and what is filled of 31 d of 1h and 395 d of 1d): ${round(market.min)} / ${round(market.median)} ms (${(market.median / baseline.market).toFixed(1)}x the first fill's)`);
  }
  // The asset market's longer windows full: hourly candles back 31 days, daily ones back 395 (those
  // of the filled hours and of the 31 days come from the views of the candles inserted).
  const day = 86_400;
  const began = performance.now();
  await fillLongCandles(env.store, 'candles_1h', hourS, nowS - 31 * day, nowS - filled * hourS);
  await fillLongCandles(env.store, 'candles_1d', day, nowS - 395 * day, Math.floor((nowS - 31 * day) / day) * day);
  const fillS = (performance.now() - began) / 1000;
  const market = await timed(() => loadAssetMarketRows(env.store, assetIds, nowS * 1000));
  console.log(
    `  31 d of 1h candles and 395 d of 1d filled (in ${fillS.toFixed(0)} s): the asset market rows ${round(market.min)} / ${round(market.median)} ms (${(market.median / baseline.market!).toFixed(1)}x the first fill's)`,
  );
  // As the API's snapshots read them: the hour's long windows once, then each snapshot its live buckets.
  const longWindows = new LongWindowCache();
  const warming = performance.now();
  await loadAssetMarketRows(env.store, assetIds, nowS * 1000, longWindows);
  const warmMs = performance.now() - warming;
  const cached = await timed(() => loadAssetMarketRows(env.store, assetIds, nowS * 1000 + 60_000, longWindows));
  const whole = await loadAssetMarketRows(env.store, assetIds, nowS * 1000 + 60_000);
  if (!isDeepStrictEqual(cached.last, whole)) throw new Error('the asset market rows read with the hour\'s long windows differ from those read whole');
  console.log(
    `    with the long windows read once an hour (assetLongWindows.ts): the hour's first ${round(warmMs)} ms, later ones ${round(cached.min)} / ${round(cached.median)} ms (${(cached.median / market.median).toFixed(2)}x read whole)`,
  );
} finally {
  await env.dispose();
}

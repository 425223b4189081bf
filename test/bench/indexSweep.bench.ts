// The index sweep's CPU on a whole-market live step, in one process and without a store: the
// inputs of a universe-sized market (`--assets`, about 2 markets each over 15 venues, a long tail
// of trades) are made up front, then the live loop is played as the runner plays it (each step
// the trailing window of 10 seconds and one new second, from the state and verdicts the step
// before kept) for `--steps` steps, in passes through a minute (each from an empty state, its
// first step not counted). Printed: the process's CPU a step (median, p90; V8's helper threads,
// which collect the step's garbage, included) beside the floor of the same process at that
// moment, one computeIndexSecond for every asset on the same candidates; and rows a step.
//
//   node test/bench/indexSweep.bench.ts [--assets 6000] [--steps 120] [--rounds 5]
import { parseArgs } from 'node:util';
import type { Currency } from '../../aggregate/currency/currencies.ts';
import { computeIndexSecond, defaultIndexParams, type MarketInput } from '../../aggregate/indexPrice.ts';
import type { QuoteRates } from '../../aggregate/indexQuoteRate.ts';
import { sweepIndex, type IndexInputs, type IndexState, type IndexVerdicts, type SecondRow, type SweepRange, type WindowRow } from '../../aggregate/indexSweep.ts';
import { seededRandom } from '../../simulator/market.ts';
import { quantile } from './benchDemo.ts';

const { values } = parseArgs({ options: { assets: { type: 'string', default: '6000' }, steps: { type: 'string', default: '120' }, rounds: { type: 'string', default: '5' } } });
const assetCount = Number(values.assets);
const steps = Number(values.steps);
const rounds = Number(values.rounds);
for (const [name, value] of Object.entries({ assets: assetCount, steps, rounds })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${String(value)}`);
}

const rates: QuoteRates = {
  stablecoins: { tether: { usdPer: 0.999, source: 'measured:bench' }, 'usd-coin': { usdPer: 1, source: 'par' } },
  fiat: { perUsd: (c: Currency) => (c === 'eur' ? 0.9 : c === 'usd' ? 1 : undefined), source: () => 'bench' },
};

// The market: bitcoin and ethereum first (they value the BTC and ETH quotes), then the tail.
// A fixed pseudo-random sequence: the same inputs in every run.
const next = seededRandom(25);
const minuteStart = 1_796_000_040; // a minute start (unix s)
/** A market's quote: mostly USD and stablecoins, a few valued through bitcoin's index or through FX. */
const quoteOf = (draw: number): string => (draw < 0.02 ? 'BTC' : draw < 0.04 ? 'EUR' : draw < 0.5 ? 'USDT' : draw < 0.75 ? 'USD' : 'USDC');
const markets: (WindowRow & { rate: number; price: number })[] = [];
for (let i = 0; i < assetCount; i++) {
  const asset = i === 0 ? 'bitcoin' : i === 1 ? 'ethereum' : `asset-${i}`;
  const price = i === 0 ? 90_000 : i === 1 ? 3_000 : 10 ** (next() * 6 - 3);
  // A few assets carry most of the trades: the rate falls as a power of the rank.
  const rate = 40 / (1 + i) ** 0.9;
  const count = 1 + Math.floor(next() * 3);
  for (let m = 0; m < count; m++) {
    const quote = i < 2 ? 'USD' : quoteOf(next());
    const quotePrice = quote === 'BTC' ? price / 90_000 : quote === 'EUR' ? price * 0.9 : price;
    const trades = Math.max(1, Math.round(rate * 3_600));
    markets.push({ asset, venue: `venue-${(i + m * 7) % 15}`, market: `${asset.toUpperCase()}${quote}-${m}`, quote, windowNotional: trades * quotePrice, windowTrades: trades, intervalTrades: trades, close: quotePrice, rate: rate / count, price: quotePrice });
  }
}

/** One second of trades: each market trades in it with its rate's chance (at most once; its price moves a little). */
function secondRows(second: number): SecondRow[] {
  const rows: SecondRow[] = [];
  for (const m of markets) {
    if (next() >= Math.min(1, m.rate)) continue;
    const price = m.price * (1 + (next() - 0.5) * 0.002);
    rows.push({ asset: m.asset, venue: m.venue, market: m.market, quote: m.quote, second, notional: price, volume: 1, trades: 1, price, lastTradeAt: second * 1000 + Math.floor(next() * 1000) });
  }
  return rows;
}

const secondsOfMinute = Array.from({ length: 60 + 12 }, (_, i) => secondRows(minuteStart + i));
const inputsThrough = (to: number): IndexInputs => ({
  windows: markets.map(({ rate: _rate, price: _price, ...row }) => row),
  buckets: [],
  lastTrades: markets.map((m) => ({ asset: m.asset, venue: m.venue, market: m.market, quote: m.quote, price: m.price, lastTradeAt: minuteStart * 1000 - 30_000 })),
  // The minute's seconds up to `to`, as the live step reads them (its earlier seconds kept from the steps before).
  seconds: secondsOfMinute.slice(0, Math.max(0, Math.min(to, minuteStart + 59) - minuteStart + 1)).flat(),
  crossedBooks: [],
  disconnectedBefore: [],
  statusChanges: [],
  perpetualVenues: new Set(),
});

/** Steps of one pass through the minute: those ending 10 s to 58 s into it. */
const stepsInMinute = 49;

/**
 * The live loop, `steps` steps: passes through the minute, each from an empty state as after a
 * start, its first step (every asset computed, every row written) not counted. ms of CPU and rows
 * written per step.
 */
function liveLoop(): { ms: number[]; rows: number[] } {
  let prior: IndexState = new Map();
  let verdicts: IndexVerdicts | undefined;
  // What index_ticks holds as the runner knows it: the rows written in the trailing window.
  const written = new Map<string, string>();
  const ms: number[] = [];
  const rows: number[] = [];
  for (let i = 0; i < steps; i++) {
    if (i % stepsInMinute === 0) {
      prior = new Map();
      verdicts = undefined;
      written.clear();
    }
    const to = minuteStart + 10 + (i % stepsInMinute);
    const range: SweepRange = { from: to - 10, to, keepAt: to - 10 };
    const inputs = inputsThrough(to);
    const started = process.cpuUsage();
    const result = sweepIndex({ range, inputs, prior, verdicts, params: defaultIndexParams, rates, writes: { storedThrough: -1, written }, computedAt: i + 1 });
    const used = process.cpuUsage(started);
    if (i % stepsInMinute !== 0) {
      ms.push((used.user + used.system) / 1000);
      rows.push(result.rows.length);
    }
    // The next step starts from the state 10 s before this one's end, as the runner's does.
    prior = result.states.get(to - 10) ?? prior;
    verdicts = result.verdicts;
    for (const [key, content] of result.written) written.set(key, content);
    for (const key of written.keys()) if (Number(key.split('\u0000')[1]) < to - 10) written.delete(key);
  }
  return { ms, rows };
}

/** The floor: one computeIndexSecond for every asset, on candidates built from the same windows and last trades. */
function everyAssetOnce(): number {
  const byAsset = Map.groupBy(markets, (m) => m.asset);
  const second = minuteStart + 30;
  const started = process.cpuUsage();
  for (const [, ofAsset] of byAsset) {
    const candidates: MarketInput[] = ofAsset.map((m) => ({
      venue: m.venue, market: m.market, quote: m.quote, contract: 'spot', usdPerQuote: m.quote === 'BTC' ? 90_000 : 1, lastPrice: m.price, lastTradeAt: second * 1000,
      windowNotional: m.windowNotional, meanIntervalMs: 1_000, crossed: false, disconnected: false, inSecond: { notional: 0, volume: 0, trades: 0 },
    }));
    computeIndexSecond(second, candidates, undefined, defaultIndexParams);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

const perSecond = secondsOfMinute.reduce((sum, rows) => sum + rows.length, 0) / secondsOfMinute.length;
console.log(`index sweep bench: ${assetCount} assets, ${markets.length} markets, ${Math.round(perSecond)} market-seconds with trades a second; ${steps} live steps a round, ${rounds} rounds`);
console.log('  round | step CPU ms p50 | p90 | rows a step, p50 | floor: every asset once, ms | step / floor');
const allRatios: number[] = [];
for (let round = 1; round <= rounds; round++) {
  // Alternating, so that a slow moment of the machine weighs on both.
  const floors = Array.from({ length: 10 }, everyAssetOnce);
  const { ms, rows } = liveLoop();
  floors.push(...Array.from({ length: 10 }, everyAssetOnce));
  const floor = quantile(floors, 0.5);
  const p50 = quantile(ms, 0.5);
  allRatios.push(p50 / floor);
  console.log(`  ${round} | ${p50.toFixed(1)} | ${quantile(ms, 0.9).toFixed(1)} | ${quantile(rows, 0.5)} | ${floor.toFixed(1)} | ${(p50 / floor).toFixed(2)}`);
}
console.log(`  median step / floor over the rounds: ${quantile(allRatios, 0.5).toFixed(2)}`);

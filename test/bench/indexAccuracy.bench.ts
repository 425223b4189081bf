// Accuracy of the index price against the simulator's true price (issue 4, "Proof"): SIMULATED
// venues, one biased +5 %, one that freezes, one thin, driven from the market model in simulated
// time (faster than the clock), through the real store and the real index runner.
// Usage: node test/bench/indexAccuracy.bench.ts [seed]   (prints median and p99 error in bps)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule, IndexRunner } from '../../aggregate/indexRunner.ts';
import { MarketModel, type VenueListing } from '../../simulator/market.ts';
import { createLogger } from '../../infra/log.ts';
import { migrate } from '../../infra/migrate.ts';
import { openStore } from '../../infra/store.ts';

const seed = Number(process.argv[2] ?? 20261122);
const start = Date.UTC(2026, 0, 1);
/** An hour of history first, so the volume weights and the trade-rate windows are full. */
const warmUpMs = 3_600_000;
const runMs = 600_000;
/** When the frozen venue stops sending trades, into the measured run. */
const freezeAfterMs = 120_000;
/** The thin venue keeps one trade in this many. */
const thinEvery = 40;
const stepMs = 100;
const assets = { BTC: 'bitcoin', ETH: 'ethereum' } as const;

const dir = mkdtempSync(join(tmpdir(), 'mds-index-accuracy-'));
const store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
await migrate(store);

const model = new MarketModel(seed, { tradesPerSecondPerMarket: 2 });
const listings = (venue: string, biasBps = 0) =>
  model.listing(venue, Object.keys(assets).flatMap((base) => [{ symbol: `${base}USD`, base, quote: 'USD' }, { symbol: `${base}USDT`, base, quote: 'USDT' }]), biasBps);
const venues: { listing: VenueListing; keeps: (t: number, i: number) => boolean; role: string }[] = [
  { listing: listings('sim-a'), keeps: () => true, role: 'normal' },
  { listing: listings('sim-b'), keeps: () => true, role: 'normal' },
  { listing: listings('sim-c'), keeps: () => true, role: 'normal' },
  { listing: listings('sim-biased', 500), keeps: () => true, role: 'biased +5 %' },
  { listing: listings('sim-frozen'), keeps: (t) => t < start + warmUpMs + freezeAfterMs, role: `frozen after ${freezeAfterMs / 1000} s` },
  { listing: listings('sim-thin'), keeps: (_, i) => i % thinEvery === 0, role: `thin (1 trade in ${thinEvery})` },
];

let kept = 0;
/** Advances the model from `from` to `to` (ms) and returns the trades as the aggregator stores them. */
function simulate(from: number, to: number, truth: Map<number, Record<string, number>>): object[] {
  const rows: object[] = [];
  for (let t = from; t < to; t += stepMs) {
    model.advance(stepMs);
    for (const v of venues) {
      for (const m of v.listing.markets) {
        for (const trade of v.listing.step(m, t, t + stepMs - 1).trades) {
          if (!v.keeps(trade.time, kept++)) continue;
          const asset = assets[m.base as keyof typeof assets];
          rows.push({
            venue: trade.venue, market: trade.symbol, asset, quote: trade.quote, trade_id: String(trade.id),
            ts: trade.time, received_at: trade.time, price: Number(trade.price), quantity: Number(trade.qty), side: trade.side,
          });
        }
      }
    }
    // The true price at the end of each second.
    if ((t + stepMs) % 1000 === 0) truth.set((t + stepMs) / 1000 - 1, Object.fromEntries(Object.entries(assets).map(([base, id]) => [id, model.reference(base, 'USD')])));
  }
  return rows;
}

const truth = new Map<number, Record<string, number>>();
let now = start;
const runner = new IndexRunner({ store, log: createLogger('silent'), params: defaultIndexParams, schedule: defaultIndexSchedule, now: () => now });
const began = performance.now();
const warmUp = simulate(start, start + warmUpMs, truth);
for (let i = 0; i < warmUp.length; i += 50_000) await store.insert('trades', warmUp.slice(i, i + 50_000));
now = start + warmUpMs;
await runner.catchUp();
// The measured run as the service lives it: trades land every 5 s, the runner steps at the simulated clock.
for (let t = start + warmUpMs; t < start + warmUpMs + runMs; t += 5_000) {
  await store.insert('trades', simulate(t, t + 5_000, truth));
  now = t + 5_000;
  await runner.step();
}
now = start + warmUpMs + runMs + defaultIndexSchedule.lagMs + 1_000;
await runner.catchUp();
const wallS = (performance.now() - began) / 1000;

const firstS = (start + warmUpMs) / 1000;
const lastS = (start + warmUpMs + runMs) / 1000 - 1;
const rows = await store.rows<{ asset: string; second: number; price: number; status: string; excluded: Record<string, string> }>(
  `SELECT asset, toUnixTimestamp(second) AS second, price, toString(status) AS status, excluded
   FROM index_ticks FINAL WHERE second <= toDateTime({last:UInt32}, 'UTC') ORDER BY asset, second`,
  { last: lastS },
);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
const report: string[] = [];
const all: number[] = [];
const reasons = new Map<string, Set<string>>();
for (const asset of Object.values(assets)) {
  const own = rows.filter((r) => r.asset === asset);
  const errors: number[] = [];
  const statuses = new Map<string, number>();
  let i = 0;
  let current: (typeof own)[number] | undefined;
  for (let s = firstS; s <= lastS; s++) {
    // The index of a second is the latest row at or before it.
    while (i < own.length && own[i]!.second <= s) current = own[i++];
    if (!current || current.status === 'none') continue;
    errors.push(Math.abs(current.price / truth.get(s)![asset]! - 1) * 10_000);
    statuses.set(current.status, (statuses.get(current.status) ?? 0) + 1);
    for (const [market, reason] of Object.entries(current.excluded)) reasons.set(market.split(':')[0]!, (reasons.get(market.split(':')[0]!) ?? new Set()).add(reason));
  }
  errors.sort((a, b) => a - b);
  all.push(...errors);
  report.push(
    `  ${asset.padEnd(9)} seconds ${errors.length}  median ${percentile(errors, 0.5).toFixed(2)} bps  p99 ${percentile(errors, 0.99).toFixed(2)} bps  max ${errors.at(-1)!.toFixed(2)} bps  status ${[...statuses].map(([k, v]) => `${k} ${v}`).join(', ')}`,
  );
}
all.sort((a, b) => a - b);

console.log(`index accuracy vs the simulator's true price (SIMULATED; seed ${seed}; ${runMs / 60_000} simulated minutes after ${warmUpMs / 60_000} of warm-up, in ${wallS.toFixed(1)} s)`);
for (const v of venues) console.log(`  venue ${v.listing.venue.padEnd(11)} ${v.role.padEnd(24)} excluded as: ${[...(reasons.get(v.listing.venue) ?? [])].join(', ') || '-'}`);
for (const line of report) console.log(line);
console.log(`  all       median ${percentile(all, 0.5).toFixed(2)} bps  p99 ${percentile(all, 0.99).toFixed(2)} bps  (targets: 5 bps median, 25 bps p99)`);

await store.close();
rmSync(dir, { recursive: true, force: true });

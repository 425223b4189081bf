// npm run bench:recovery: a venue outage of three minutes on a market printing 100 trades a second
// (issue #26's target), the whole embedded service against the SIMULATED venue: how long after the
// reconnect the gap is recovered from the venue's REST history, and the lag of live collection
// meanwhile against its lag before the outage, measured in the same run. Then, from the store: every
// trade the venue printed is stored exactly once.
//
// Lag, as in bench:capacity: from the venue time of a trade to the moment /metrics (scraped every
// 200 ms) says the trade sink has handled it. The sink handles live and recovered trades alike, so
// live trades handled are at least (stored + dropped as duplicates - recovered trades published):
// a bound that can only make the lag look longer. Trades a socket was sent as the outage cut it,
// and which the recovery stored instead, are taken out of what live collection owes.
//   node test/bench/recovery.bench.ts [--venue binance] [--rate 100] [--outage-seconds 180] [--warm-seconds 40]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore } from '../../infra/store.ts';
import { startSimulator, type SimulatedVenueId } from '../../simulator/simulator.ts';
import type { SentTrade } from '../../simulator/venueServer.ts';
import { metricSum, prepareStore, serviceEnv } from '../soak.ts';
import { accountTrades, tradeKey } from '../soakChecks.ts';
import { getJson, SoakService } from '../soakService.ts';
import { freeLoopbackPort } from '../support/ports.ts';
import { until, untilValue } from '../support/until.ts';

const { values: args } = parseArgs({
  options: {
    venue: { type: 'string', default: 'binance' },
    rate: { type: 'string', default: '100' },
    'outage-seconds': { type: 'string', default: '180' },
    'warm-seconds': { type: 'string', default: '40' },
  },
});
const venue = args.venue as SimulatedVenueId;
const rate = Number(args.rate);
const outageMs = Number(args['outage-seconds']) * 1_000;
const warmMs = Number(args['warm-seconds']) * 1_000;
const recoveryTargetMs = 60_000;
const lagTargetMs = 2_000;
const scrapeMs = 200;

/** One scrape of /metrics: live trades the sink has handled at least, and the recovery's state. */
interface Scrape {
  at: number;
  handledLive: number;
  gapsPending: number;
  connected: boolean;
}

async function scrape(base: string): Promise<Scrape | undefined> {
  const text = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.text(), () => undefined);
  if (text === undefined) return undefined;
  const handled = metricSum(text, 'mds_store_inserted_rows_total', 'table="trades"') + metricSum(text, 'mds_sink_duplicates_total');
  return {
    at: Date.now(),
    handledLive: handled - metricSum(text, 'mds_venue_recovered_trades_total'),
    gapsPending: metricSum(text, 'mds_venue_gaps_pending'),
    connected: metricSum(text, 'mds_venue_connected') > 0,
  };
}

/** Per venue second in [from, to): the delay from the second's end until the sink had handled every live trade owed up to it. */
function lagsMs(scrapes: readonly Scrape[], owedUpTo: (second: number) => number, from: number, to: number): number[] {
  const lags: number[] = [];
  let i = 0;
  for (let second = Math.floor(from / 1_000); (second + 1) * 1_000 <= to; second++) {
    const owed = owedUpTo(second);
    while (i < scrapes.length && scrapes[i]!.handledLive < owed) i++;
    if (i === scrapes.length) break;
    lags.push(Math.max(0, scrapes[i]!.at - (second + 1) * 1_000));
  }
  return lags;
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

const dataDir = mkdtempSync(join(tmpdir(), 'mds-recovery-bench-'));
const keySecret = randomBytes(32).toString('hex');
const key = await prepareStore(dataDir, keySecret);
// One followed market (BTCUSDT; the venue's BTC-quoted market is not followed) at `rate` trades a second.
const simulator = await startSimulator({ seed: 11, venues: [venue], tickers: ['BTC'], tradesPerSecondPerMarket: rate, tickMs: 100 });
/** Live trades a socket was sent, by venue time. */
const sent: SentTrade[] = [];
const printed: SentTrade[] = [];
const firstDelivered = new Map<string, number>();
simulator.onTradeSent((t) => {
  sent.push(t);
  const market = `${t.venue}\u0000${t.market}`;
  if (!firstDelivered.has(market)) firstDelivered.set(market, t.trade.time);
});
simulator.onTradePrinted((t) => printed.push(t));
const port = await freeLoopbackPort();
const service = new SoakService({ port, env: serviceEnv(simulator, { busMaxRecordsPerTopic: 100_000 }, port, dataDir, keySecret), venues: [venue], logFile: join(dataDir, 'service.log') });
const scrapes: Scrape[] = [];
let scraping = true;
const scraper = (async () => {
  while (scraping) {
    const s = await scrape(service.base);
    if (s) scrapes.push(s);
    await sleep(scrapeMs);
  }
})();

const say = (line: string) => process.stdout.write(`recovery: ${line}\n`);
let failed = false;
try {
  await service.start();
  await until(async () => ((await getJson(`${service.base}/v1/prices?ids=bitcoin`, key)).body as { prices?: { measured: boolean }[] } | undefined)?.prices?.[0]?.measured === true, 'a measured bitcoin price', { timeoutMs: 120_000, everyMs: 250 });
  const warmFrom = Date.now();
  say(`${venue}, 1 market at ${rate} trades/s, ${warmMs / 1000} s before a ${outageMs / 1000} s outage; data ${dataDir}`);
  await sleep(warmMs);
  const outageFrom = Date.now();
  simulator.venue(venue).inject({ fault: 'outage', ms: outageMs });
  await sleep(outageMs);
  const outageTo = Date.now();
  const reconnect = await untilValue(() => scrapes.find((s) => s.at > outageTo && s.connected), 'the venue to reconnect', { timeoutMs: 120_000, everyMs: 100 });
  const recovered = await untilValue(() => scrapes.find((s) => s.at > reconnect.at && s.gapsPending === 0), 'the gap to be recovered', { timeoutMs: 600_000, everyMs: 100 });
  // Live collection after the recovery too, so the lag covers the whole recovery and a bit beyond.
  await sleep(Math.max(10_000, recoveryTargetMs - (Date.now() - reconnect.at)));
  const measuredTo = Date.now() - 5_000;
  simulator.pause();
  await until(async () => (await scrape(service.base))?.gapsPending === 0, 'the pipeline to settle', { timeoutMs: 120_000, everyMs: 1_000 });
  await sleep(3_000);
  scraping = false;
  await scraper;
  const code = await service.stop();
  if (code !== 0) throw new Error(`the service exited with ${code} on SIGTERM`);

  const store = await openStore({ MDS_DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  try {
    // Sent to a socket that the outage cut before the collector read them; the recovery stored them instead.
    const late = await store.rows<{ id: string }>(
      "SELECT trade_id AS id FROM trades WHERE venue = {venue:String} AND dateDiff('millisecond', ts, received_at) > 10000",
      { venue },
    );
    const recoveredIds = new Set(late.map((r) => tradeKey(venue, 'BTCUSDT', r.id)));
    const owed = sent.filter((t) => !recoveredIds.has(tradeKey(t.venue, t.market, t.tradeId))).map((t) => t.trade.time);
    owed.sort((a, b) => a - b);
    /** Live trades owed by the end of `second`: a binary search over their times. */
    const owedUpTo = (second: number) => {
      let lo = 0;
      let hi = owed.length;
      const end = (second + 1) * 1_000;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (owed[mid]! < end) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    const before = lagsMs(scrapes, owedUpTo, warmFrom + 5_000, outageFrom - 1_000);
    const during = lagsMs(scrapes, owedUpTo, reconnect.at, measuredTo);
    const account = await accountTrades(store, printed, { from: warmFrom, to: measuredTo }, firstDelivered);
    const recoveryMs = recovered.at - reconnect.at;
    const p99Before = percentile(before, 99);
    const p99During = percentile(during, 99);
    say(`reconnected ${((reconnect.at - outageTo) / 1000).toFixed(1)} s after the outage ended; gap recovered ${(recoveryMs / 1000).toFixed(1)} s after the reconnect (target ${recoveryTargetMs / 1000} s)`);
    say(`live lag p50/p99/max before the outage ${percentile(before, 50)}/${p99Before}/${percentile(before, 100)} ms over ${before.length} s; from the reconnect ${percentile(during, 50)}/${p99During}/${percentile(during, 100)} ms over ${during.length} s (target p99 ${lagTargetMs} ms); p99 ratio ${(p99During / Math.max(p99Before, 1)).toFixed(2)}`);
    say(`trades printed ${account.printed}, stored ${account.stored}, duplicates ${account.duplicates}, lost without a gap ${account.unaccounted.length}, unrecoverable ${JSON.stringify(account.unrecoverable)}; ${late.length} sent as the socket was cut, stored by the recovery`);
    failed = recoveryMs > recoveryTargetMs || !(p99During < lagTargetMs) || account.stored !== account.printed || account.duplicates > 0;
    say(failed ? 'FAIL' : 'PASS');
  } finally {
    await store.close();
  }
} finally {
  scraping = false;
  await scraper;
  if (service.pid !== undefined) await service.stop().catch(() => undefined);
  await simulator.close();
  if (!failed) rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

// npm run bench:recovery: a venue outage of three minutes on a market printing 100 trades a second
// (issue #26's target), the whole embedded service against the SIMULATED venue: how long after the
// reconnect the gap is recovered from the venue's REST history, and the lag of live collection
// meanwhile against its lag before the outage, measured in the same run. Then, from the store: every
// trade the venue printed is stored exactly once.
//
// Lag: ingestLag.ts, from /metrics scraped every 200 ms: from the end of a second of venue time until
// the trade sink has committed every trade the bus had taken by then, live and recovered trades
// alike, in the order they came: a live trade that waits behind a recovered page waits here too.
//   npm run bench:recovery [-- --venue binance --rate 100 --outage-seconds 180 --warm-seconds 40 --keep]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore } from '../../infra/store.ts';
import { startSimulator, type SimulatedVenueId } from '../../simulator/simulator.ts';
import type { SentTrade } from '../../simulator/venueServer.ts';
import { metricSum, prepareStore, serviceEnv } from '../soak.ts';
import { accountTrades } from '../soakChecks.ts';
import { SoakService } from '../soakService.ts';
import { freeLoopbackPort } from '../support/ports.ts';
import { until, untilValue } from '../support/until.ts';
import { lagsMs, percentile, pipelineCounts, type PipelineScrape } from './ingestLag.ts';

const { values: args } = parseArgs({
  options: {
    venue: { type: 'string', default: 'binance' },
    rate: { type: 'string', default: '100' },
    'outage-seconds': { type: 'string', default: '180' },
    'warm-seconds': { type: 'string', default: '40' },
    keep: { type: 'boolean', default: false },
  },
});
const venue = args.venue as SimulatedVenueId;
const rate = Number(args.rate);
const outageMs = Number(args['outage-seconds']) * 1_000;
const warmMs = Number(args['warm-seconds']) * 1_000;
const recoveryTargetMs = 60_000;
const lagTargetMs = 2_000;
const scrapeMs = 200;

/** One scrape of /metrics: the trades topic's published and committed counts, and the recovery's state. */
interface Scrape extends PipelineScrape {
  recovered: number;
  gapsPending: number;
  connected: boolean;
}

async function scrape(base: string): Promise<Scrape | undefined> {
  const text = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.text(), () => undefined);
  if (text === undefined) return undefined;
  return {
    at: Date.now(),
    ...pipelineCounts(text),
    recovered: metricSum(text, 'mds_venue_recovered_trades_total'),
    gapsPending: metricSum(text, 'mds_venue_gaps_pending'),
    connected: metricSum(text, 'mds_venue_connected') > 0,
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'mds-recovery-bench-'));
const keySecret = randomBytes(32).toString('hex');
const key = await prepareStore(dataDir, keySecret);
// One followed market (BTCUSDT; the venue's BTC-quoted market is not followed) at `rate` trades a second.
const simulator = await startSimulator({ seed: 11, venues: [venue], tickers: ['BTC'], tradesPerSecondPerMarket: rate, tickMs: 100 });
const printed: SentTrade[] = [];
/** Per market, the first trade a socket delivered: where the account of printed trades starts. */
const firstDelivered = new Map<string, number>();
simulator.onTradeSent((t) => {
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
// Kept for a look unless the run got through and passed.
let failed = true;
try {
  await service.start();
  await service.untilMeasured(key);
  const warmFrom = Date.now();
  say(`${venue}, 1 market at ${rate} trades/s, ${warmMs / 1000} s before a ${outageMs / 1000} s outage; data ${dataDir}`);
  await sleep(warmMs);
  const outageFrom = Date.now();
  simulator.venue(venue).inject({ fault: 'outage', ms: outageMs });
  await sleep(outageMs);
  const outageTo = Date.now();
  const reconnect = await untilValue(() => scrapes.find((s) => s.at > outageTo && s.connected), 'the venue to reconnect', { timeoutMs: 120_000, everyMs: 100 });
  // The gap opens with the first live trade after the reconnect; recovered once its trades were published and it ended.
  const recoveredBefore = scrapes.findLast((s) => s.at <= outageFrom)?.recovered ?? 0;
  const recovered = await untilValue(() => scrapes.find((s) => s.at > reconnect.at && s.recovered > recoveredBefore && s.gapsPending === 0), 'the gap to be recovered', {
    timeoutMs: 600_000,
    everyMs: 100,
  });
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
    const before = lagsMs(scrapes, warmFrom + 5_000, outageFrom - 1_000);
    const during = lagsMs(scrapes, reconnect.at, measuredTo);
    const account = await accountTrades(store, printed, { from: warmFrom, to: measuredTo }, firstDelivered);
    const recoveryMs = recovered.at - reconnect.at;
    const p99Before = percentile(before, 99);
    const p99During = percentile(during, 99);
    say(`reconnected ${((reconnect.at - outageTo) / 1000).toFixed(1)} s after the outage ended; gap recovered ${(recoveryMs / 1000).toFixed(1)} s after the reconnect (target ${recoveryTargetMs / 1000} s)`);
    say(`lag p50/p99/max before the outage ${percentile(before, 50)}/${p99Before}/${percentile(before, 100)} ms over ${before.length} s; from the reconnect ${percentile(during, 50)}/${p99During}/${percentile(during, 100)} ms over ${during.length} s (target p99 ${lagTargetMs} ms); p99 ratio ${(p99During / Math.max(p99Before, 1)).toFixed(2)}`);
    say(`trades printed ${account.printed}, stored ${account.stored}, duplicates ${account.duplicates}, lost without a gap ${account.unaccounted.length}, unrecoverable ${JSON.stringify(account.unrecoverable)}; recovered ${scrapes.at(-1)?.recovered}`);
    failed = recoveryMs > recoveryTargetMs || !(p99During < lagTargetMs) || account.stored !== account.printed || account.duplicates > 0;
    // For a look afterwards: every scrape.
    if (args.keep) writeFileSync(join(dataDir, 'scrapes.json'), JSON.stringify({ scrapes, reconnect: reconnect.at, outageFrom, outageTo }));
    say(failed ? 'FAIL' : 'PASS');
  } finally {
    await store.close();
  }
} finally {
  scraping = false;
  await scraper;
  if (service.pid !== undefined) await service.stop().catch(() => undefined);
  await simulator.close();
  if (!failed && !args.keep) rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

// The soak run: the whole embedded service, as its own process, against the market simulator
// (run here, in this process, so that every trade it delivers on a socket is recorded), with faults
// injected on a schedule; at the end it checks, from the store and the API, that nothing was lost.
//   npm run soak                 10 minutes, the default bounds
//   npm run soak -- --minutes 30 --keep   longer, and keep the data directory and the service log
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { answerHelpAndVersion } from '../infra/cli.ts';
import { openStore, type Store } from '../infra/store.ts';
import { migrate } from '../infra/migrate.ts';
import { findVenue } from '../infra/catalog/catalog.ts';
import { KeyStore } from '../api/keys.ts';
import { fxDemoSnapshotFile } from '../aggregate/jobs/fxReference.ts';
import { venueEnvName } from '../ingest/venue.ts';
import { startSimulator, type SimulatedVenueId, type Simulator } from '../simulator/simulator.ts';
import { freeLoopbackPort } from './support/ports.ts';
import { until } from './support/until.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/** One fault, at a time from the start of the run. */
export type SoakFault =
  | { atMs: number; venue: SimulatedVenueId; fault: 'drop' | 'garbage' | 'reconnect' }
  | { atMs: number; venue: SimulatedVenueId; fault: 'stall' | 'outage'; ms: number }
  | { atMs: number; venue: SimulatedVenueId; fault: 'gap'; symbol: string }
  | { atMs: number; fault: 'store-outage'; ms: number };

export interface SoakOptions {
  durationMs: number;
  faults: readonly SoakFault[];
  /** The service's in-process bus bound per topic (records). */
  busMaxRecordsPerTopic: number;
  /** Highest RSS (MB) the service may reach. */
  rssBoundMb: number;
  /** After a store outage, how long prices may stay unmeasured while the pipeline catches up (ms). */
  recoveryMs: number;
  /** Keep the data directory and the service log for a look afterwards. */
  keep?: boolean;
  report?: (line: string) => void;
}

/** The schedule for a run of `durationMs`: each fault at the same share of the run, whatever its length. */
export function faultSchedule(durationMs: number, storeOutageMs: number): SoakFault[] {
  const at = (share: number) => Math.round(durationMs * share);
  return [
    { atMs: at(0.1), venue: 'binance', fault: 'drop' },
    { atMs: at(0.15), venue: 'kraken', fault: 'stall', ms: Math.min(40_000, at(0.1)) },
    { atMs: at(0.2), venue: 'bybit', fault: 'gap', symbol: 'BTCUSDT' },
    { atMs: at(0.25), venue: 'okx', fault: 'garbage' },
    { atMs: at(0.3), venue: 'okx', fault: 'reconnect' },
    { atMs: at(0.4), fault: 'store-outage', ms: storeOutageMs },
    { atMs: at(0.7), venue: 'bitstamp', fault: 'outage', ms: Math.min(60_000, at(0.1)) },
  ];
}

export interface SoakResult {
  pass: boolean;
  failures: string[];
  /** The closing line. */
  summary: string;
  figures: {
    seconds: number;
    delivered: number;
    stored: number;
    missing: number;
    unexpected: number;
    duplicates: number;
    indexSecondsChecked: number;
    indexSecondsLost: number;
    rssStartMb: number;
    rssMaxMb: number;
    rssEndMb: number;
    measuredShare: number;
    busDropped: number;
    readyFailedDuringOutage: boolean;
    readyBackAfterOutage: boolean;
  };
}

interface Poll {
  at: number;
  rssMb: number | undefined;
  ready: number | undefined;
  /** Every asset polled had a measured price updated within 15 s. */
  measured: boolean | undefined;
}

const polledAssets = ['bitcoin', 'ethereum', 'solana', 'ripple', 'dogecoin'];

function rssMbOf(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

async function getJson(url: string, key?: string): Promise<{ status: number; body: unknown }> {
  try {
    const res = await fetch(url, { headers: key ? { 'x-api-key': key } : {}, signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: await res.json().catch(() => undefined) };
  } catch {
    return { status: 0, body: undefined };
  }
}

/** Sum of the samples of a counter or gauge in a /metrics text whose labels include `labels` (e.g. `topic="trades"`). */
function metricSum(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))) if (m[1]!.includes(labels)) sum += Number(m[2]);
  return sum;
}

/** What the service's /metrics says of the trades on their way: published by the collectors, not yet committed by the trade sink. */
async function tradesInFlight(base: string): Promise<{ published: number; uncommitted: number | undefined }> {
  const text = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
  const lagLines = text.match(/^mds_bus_lag_records\{[^}]*group="aggregate-trades"[^}]*\} /gm) ?? [];
  return {
    published: metricSum(text, 'mds_venue_trades_total'),
    uncommitted: lagLines.length > 0 ? metricSum(text, 'mds_bus_lag_records', 'group="aggregate-trades"') : undefined,
  };
}

/** Seconds with a trade on a market that the index then counted, but no index row: seconds the index lost. */
async function lostIndexSeconds(store: Store, from: number, to: number): Promise<{ checked: number; lost: string[] }> {
  const traded = await store.rows<{ asset: string; venue: string; market: string; s: number }>(
    `SELECT asset, venue, market, toUnixTimestamp(second) AS s FROM market_seconds
     WHERE second >= toDateTime({from:UInt32}, 'UTC') AND second <= toDateTime({to:UInt32}, 'UTC')
     GROUP BY asset, venue, market, s`,
    { from, to },
  );
  const ticks = await store.rows<{ asset: string; s: number; constituents: string[] }>(
    `SELECT asset, toUnixTimestamp(second) AS s, constituents FROM index_ticks FINAL
     WHERE second >= toDateTime({from:UInt32}, 'UTC') - INTERVAL 1 HOUR AND second <= toDateTime({to:UInt32}, 'UTC')
     ORDER BY asset, s`,
    { from, to },
  );
  const ticksOf = Map.groupBy(ticks, (t) => t.asset);
  const tradedAt = Map.groupBy(
    traded.filter((t) => findVenue(t.venue)?.contract !== 'perpetual'),
    (t) => `${t.asset}\u0000${t.s}`,
  );
  const lost: string[] = [];
  for (const [key, markets] of tradedAt) {
    const [asset, second] = [markets[0]!.asset, markets[0]!.s];
    const rows = ticksOf.get(asset) ?? [];
    // The asset's row of that second, else the latest before it (rows are sorted by second).
    let latest: (typeof rows)[number] | undefined;
    for (const r of rows) {
      if (r.s > second) break;
      latest = r;
    }
    if (latest?.s === second) continue;
    // Still a constituent and traded: that second should have had a row (its trade count is not 0).
    const constituents = new Set(latest?.constituents ?? []);
    if (markets.some((m) => constituents.has(`${m.venue}:${m.market}`))) lost.push(key.replace('\u0000', '@'));
  }
  return { checked: tradedAt.size, lost };
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const report = options.report ?? ((line: string) => process.stdout.write(`${line}\n`));
  const dataDir = mkdtempSync(join(tmpdir(), 'mds-soak-'));
  const logFile = join(dataDir, 'service.log');
  const port = await freeLoopbackPort();
  const failures: string[] = [];

  // A key, made before the service opens the store (chDB allows one process per data directory).
  const setup = await openStore({ MDS_DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  await migrate(setup);
  // The service hashes keys with the same secret (API_KEY_SECRET below).
  const keySecret = randomBytes(32).toString('hex');
  const { key } = await new KeyStore(setup, { secret: keySecret }).create('soak');
  await setup.close();

  const simulator: Simulator = await startSimulator({ seed: 7, tickMs: 250, tradesPerSecondPerMarket: 1 });
  /** venue, market, trade id of every trade the simulator sent on a socket. */
  const delivered = new Set<string>();
  const stopRecording = simulator.onTradeSent((t) => delivered.add(`${t.venue}\u0000${t.market}\u0000${t.tradeId}`));

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    MDS_DATA_DIR: dataDir,
    API_KEY_SECRET: keySecret,
    MDS_SIMULATED: '1',
    MDS_FAULT_INJECTION: '1',
    LOG_LEVEL: 'info',
    QUOTA_PER_HOUR: '100000000',
    INDEX_BACKFILL_HOURS: '1',
    FX_REFERENCE_FILE: fxDemoSnapshotFile,
    BUS_MAX_RECORDS_PER_TOPIC: String(options.busMaxRecordsPerTopic),
  };
  for (const id of simulator.venues) {
    const { ws, rest } = simulator.endpoints(id);
    env[venueEnvName(id, 'WS')] = ws;
    env[venueEnvName(id, 'REST')] = rest;
  }
  const logStream = createWriteStream(logFile);
  const service: ChildProcess = spawn(process.execPath, [join(root, 'infra/roles/main.ts'), 'all', '--venues', simulator.venues.join(',')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  service.stdout!.pipe(logStream);
  service.stderr!.pipe(logStream);
  let exited: number | null | undefined;
  service.once('exit', (code) => (exited = code));
  const base = `http://127.0.0.1:${port}`;
  const polls: Poll[] = [];
  const outages: { from: number; to: number }[] = [];
  let start = 0;

  try {
    await until(
      async () => {
        if (exited !== undefined) throw new Error(`soak: the service exited (${exited}) at start; its log: ${logFile}`);
        return (await getJson(`${base}/health`)).status === 200;
      },
      'soak: the API to listen',
      { timeoutMs: 120_000, everyMs: 250 },
    );
    await until(
      async () => {
        const r = await getJson(`${base}/v1/prices?ids=bitcoin`, key);
        return (r.body as { prices?: { measured: boolean }[] } | undefined)?.prices?.[0]?.measured === true;
      },
      'soak: a measured bitcoin price',
      { timeoutMs: 120_000, everyMs: 250 },
    );
    start = Date.now();
    report(`soak: service pid ${service.pid} on ${base}, ${simulator.venues.length} simulated venues, ${options.durationMs / 1000} s, log ${logFile}`);

    const pending = [...options.faults].sort((a, b) => a.atMs - b.atMs);
    while (Date.now() - start < options.durationMs) {
      const elapsed = Date.now() - start;
      while (pending[0] && pending[0].atMs <= elapsed) {
        const f = pending.shift()!;
        if (f.fault === 'store-outage') {
          const r = await fetch(`${base}/__faults/store`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault: 'fail', ms: f.ms }) });
          if (!r.ok) throw new Error(`soak: the service refused the store fault (${r.status}): is MDS_FAULT_INJECTION honoured?`);
          outages.push({ from: Date.now(), to: Date.now() + f.ms });
        } else {
          const { atMs: _, venue, ...fault } = f;
          simulator.venue(venue).inject(fault);
        }
        report(`soak: ${Math.round(elapsed / 1000)} s: ${f.fault}${'venue' in f ? ` ${f.venue}` : ''}${'ms' in f ? ` for ${f.ms / 1000} s` : ''}`);
      }
      const [ready, prices] = await Promise.all([getJson(`${base}/ready`), getJson(`${base}/v1/prices?ids=${polledAssets.join(',')}`, key)]);
      const list = (prices.body as { prices?: { measured: boolean; updatedAt: number }[] } | undefined)?.prices;
      const now = Date.now();
      polls.push({
        at: now,
        rssMb: rssMbOf(service.pid!),
        ready: ready.status || undefined,
        measured: list ? list.length === polledAssets.length && list.every((p) => p.measured && now - p.updatedAt < 15_000) : undefined,
      });
      if (polls.length % 30 === 0) {
        const p = polls.at(-1)!;
        report(`soak: ${Math.round((now - start) / 1000)} s: rss ${Math.round(p.rssMb ?? 0)} MB, ready ${p.ready}, measured ${p.measured}, delivered ${delivered.size}`);
      }
      if (exited !== undefined) throw new Error(`soak: the service exited (${exited}) during the run; its log: ${logFile}`);
      await sleep(2_000);
    }
  } finally {
    // No trade may be on its way when the service stops: stop the market, let the pipeline drain.
    simulator.pause();
    // Drained: the collectors have published every trade the simulator delivered, and the trade sink has committed them all.
    if (exited === undefined) {
      let last: Awaited<ReturnType<typeof tradesInFlight>> | undefined;
      await until(
        async () => {
          last = await tradesInFlight(base);
          return last.published >= delivered.size && last.uncommitted === 0;
        },
        'soak: the pipeline to drain once the market stopped',
        { timeoutMs: 30_000, everyMs: 250, context: () => `delivered ${delivered.size}, ${JSON.stringify(last)}` },
      ).catch((err: Error) => failures.push(err.message));
    }
  }
  const metricsText = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
  const busDropped = [...metricsText.matchAll(/^mds_bus_dropped_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
  const end = Date.now();
  service.kill('SIGTERM');
  await new Promise<void>((resolve) => (exited !== undefined ? resolve() : service.once('exit', () => resolve())));
  stopRecording();
  await simulator.close();
  logStream.end();
  if (exited !== 0) failures.push(`the service exited with ${exited} on SIGTERM`);

  const store = await openStore({ MDS_DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  let figures: SoakResult['figures'];
  try {
    const storedRows = await store.rows<{ venue: string; market: string; id: string; n: number }>(
      'SELECT venue, market, trade_id AS id, count() AS n FROM trades GROUP BY venue, market, trade_id',
    );
    const stored = new Set<string>();
    let duplicates = 0;
    for (const r of storedRows) {
      stored.add(`${r.venue}\u0000${r.market}\u0000${r.id}`);
      if (r.n > 1) duplicates += r.n - 1;
    }
    const missing = [...delivered].filter((k) => !stored.has(k));
    const unexpected = [...stored].filter((k) => !delivered.has(k));
    if (missing.length > 0) failures.push(`${missing.length} delivered trades are not in trades, e.g. ${missing.slice(0, 3).map((k) => k.replaceAll('\u0000', '/')).join(', ')}`);
    if (unexpected.length > 0) failures.push(`${unexpected.length} stored trades were never delivered, e.g. ${unexpected.slice(0, 3).map((k) => k.replaceAll('\u0000', '/')).join(', ')}`);
    if (duplicates > 0) failures.push(`${duplicates} trades stored more than once`);

    // The index from a minute in (its windows start filling) to the last second it had time for.
    const index = await lostIndexSeconds(store, Math.floor(start / 1000) + 60, Math.floor(end / 1000) - 10);
    if (index.lost.length > 0) failures.push(`${index.lost.length} index seconds lost, e.g. ${index.lost.slice(0, 5).join(', ')}`);

    const rss = polls.map((p) => p.rssMb).filter((v): v is number => v !== undefined);
    const rssMaxMb = Math.max(...rss);
    if (rssMaxMb > options.rssBoundMb) failures.push(`RSS reached ${Math.round(rssMaxMb)} MB, over the ${options.rssBoundMb} MB bound`);

    const inOutage = (at: number, grace: number) => outages.some((o) => at >= o.from && at <= o.to + grace);
    const outside = polls.filter((p) => !inOutage(p.at, options.recoveryMs));
    const measured = outside.filter((p) => p.measured === true).length;
    const measuredShare = outside.length === 0 ? 1 : measured / outside.length;
    if (measuredShare < 1) failures.push(`prices unmeasured or late in ${outside.length - measured} of ${outside.length} polls outside the store outages`);
    if (busDropped > 0) failures.push(`the bus dropped ${busDropped} events`);
    const readyFailedDuringOutage = outages.every((o) => polls.some((p) => p.at >= o.from && p.at <= o.from + 30_000 && p.ready === 503));
    const readyBackAfterOutage = outages.every((o) => polls.some((p) => p.at > o.to && p.at <= o.to + options.recoveryMs && p.ready === 200));
    if (!readyFailedDuringOutage) failures.push('/ready did not turn 503 within 30 s of a store outage');
    if (!readyBackAfterOutage) failures.push(`/ready did not come back to 200 within ${options.recoveryMs / 1000} s of a store outage's end`);

    figures = {
      seconds: Math.round((end - start) / 1000),
      delivered: delivered.size,
      stored: stored.size,
      missing: missing.length,
      unexpected: unexpected.length,
      duplicates,
      indexSecondsChecked: index.checked,
      indexSecondsLost: index.lost.length,
      rssStartMb: Math.round(rss[0] ?? 0),
      rssMaxMb: Math.round(rssMaxMb),
      rssEndMb: Math.round(rss.at(-1) ?? 0),
      measuredShare,
      busDropped,
      readyFailedDuringOutage,
      readyBackAfterOutage,
    };
  } finally {
    await store.close();
    if (!options.keep) rmSync(dataDir, { recursive: true, force: true });
  }
  const f = figures;
  const summary =
    `soak: ${f.seconds} s, ${options.faults.length} faults, trades delivered ${f.delivered} stored ${f.stored} (missing ${f.missing}, unexpected ${f.unexpected}, duplicates ${f.duplicates}), ` +
    `index seconds lost ${f.indexSecondsLost} of ${f.indexSecondsChecked}, rss ${f.rssStartMb}->${f.rssMaxMb} max->${f.rssEndMb} MB (bound ${options.rssBoundMb}), ` +
    `prices measured ${(f.measuredShare * 100).toFixed(1)}% outside outages, bus dropped ${f.busDropped}, ready 503 in outage ${f.readyFailedDuringOutage ? 'yes' : 'no'}, back ${f.readyBackAfterOutage ? 'yes' : 'no'}: ${failures.length === 0 ? 'PASS' : 'FAIL'}`;
  return { pass: failures.length === 0, failures, summary, figures: f };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const usage = `usage: npm run soak -- [--minutes 10] [--keep]
  --minutes N   length of the run (default 10)
  --keep        keep the data directory and the service log afterwards
  --help, -h    this text
  --version     the service's version`;
  answerHelpAndVersion(process.argv.slice(2), usage);
  const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, keep: { type: 'boolean', default: false } } });
  const durationMs = Number(values.minutes) * 60_000;
  if (!(durationMs > 0)) {
    console.error(usage);
    process.exit(2);
  }
  const result = await runSoak({
    durationMs,
    faults: faultSchedule(durationMs, 60_000),
    busMaxRecordsPerTopic: 100_000,
    rssBoundMb: 1_536,
    recoveryMs: 60_000,
    keep: values.keep,
  });
  for (const failure of result.failures) console.log(`soak: FAIL: ${failure}`);
  console.log(result.summary);
  process.exit(result.pass ? 0 : 1);
}

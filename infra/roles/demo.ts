import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { etfFlowsDemoDir } from '../../aggregate/jobs/etfFlows.ts';
import { fxDemoSnapshotFile } from '../../aggregate/jobs/fxReference.ts';
import { indexSettingsFromConfig } from '../../aggregate/indexRunner.ts';
import { KeyStore } from '../../api/keys.ts';
import type { VenueDescriptor, VenueEndpoints } from '../../ingest/venue.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store.ts';
import type { RoleContext } from './context.ts';
import type { SqlAccess } from './sql.ts';
import { importDemoHistory, type DemoArchiveSet } from './demoHistory.ts';
import { startWorkerThread } from './workerThread.ts';

/** The demo's SIMULATED world, as the demo role runs with it. */
export interface DemoWorld {
  /** The configuration the demo runs with. */
  config: Config;
  /** Where a simulated venue is reached, instead of its own endpoints. */
  endpointsOf(venue: VenueDescriptor): VenueEndpoints | undefined;
  /**
   * A fresh demo store gets 45 days (DEMO_HISTORY_DAYS) of SIMULATED history, written as the venues' archive files and
   * imported with `npm run import`'s code (demoHistory.ts), so indicators that need days of data have
   * some (fear & greed needs 13 days before its first reading, and a reading 30 days back for lastMonth).
   */
  importHistory(store: Store): Promise<void>;
}

/**
 * The demo's SIMULATED world: every native venue's protocol on loopback from one market model, one
 * EVM chain, and the demo's reference files.
 */
export async function startDemoWorld({ config, log, life, metrics }: RoleContext): Promise<DemoWorld> {
  // Loaded here and only here, when the demo runs: a deployment may ship without simulator/ (test/layers.test.ts).
  const [{ isSimulatedVenue, simulatedVenueIds, simulatedUniverse }, { startDemoChain, syntheticTokens }, archiveFiles] = await Promise.all([
    import('../../simulator/simulator.ts'),
    import('../../simulator/evmChain.ts'),
    import('../../simulator/archiveFiles.ts'),
  ]);
  // Books move every 250 ms (the venues' fastest streams are 100 ms) and each market trades about
  // once a second: 15 venues, the aggregator and the API share a laptop's cores in one process.
  // With the universe, thousands of markets: each keeps its last 2,000 printed trades of the last
  // 10 minutes (what a recovery can ask its REST history for), not 20,000 of any age, so the
  // simulator's memory is its trade rate times 10 minutes, flat after that (by count alone, the
  // tail markets that trade a few times a minute would fill theirs for hours: a standalone
  // universe simulator's live heap grew 12 MB a minute, and stayed at 65 MB with a 30 s bound).
  const universe = config.DEMO_UNIVERSE_ASSETS > 0 ? { assets: config.DEMO_UNIVERSE_ASSETS } : undefined;
  const seed = Date.now();
  const simulator = await startSimulatorThread({ config, log, life, metrics }, {
    seed,
    tickMs: 250,
    tradesPerSecondPerMarket: 1,
    ...(universe ? { universe, perVenue: Object.fromEntries(simulatedVenueIds.map((id) => [id, { retainPrinted: 2_000, retainPrintedMs: 10 * 60_000 }])) } : {}),
  });
  // One SIMULATED EVM chain (named so in /v1/chains), indexed by the chain indexer job over JSON-RPC;
  // it holds the tokens of the universe the simulator serves (the same seed), read by the token-supplies job.
  const chain = await startDemoChain({ tokens: universe ? syntheticTokens(simulatedUniverse(seed, universe).assets) : [] });
  life.add('chain-simulator', 'base', () => chain.close());
  log.info({ venues: Object.fromEntries(Object.entries(simulator.endpoints).map(([id, e]) => [id, e.ws])) }, 'market simulator started: all demo data is SIMULATED');
  const demoConfig: Config = {
    ...config,
    MDS_SIMULATED: true,
    // The history is sparse (a trade a market every 15 minutes): the index of its last 26 hours is
    // computed (by the import, or by a runner that finds none stored), enough for the 24 h changes,
    // in one step, not a week of it: live prices wait until it is done.
    INDEX_BACKFILL_HOURS: process.env.INDEX_BACKFILL_HOURS === undefined ? 26 : config.INDEX_BACKFILL_HOURS,
    INDEX_MAX_SECONDS_PER_TICK: process.env.INDEX_MAX_SECONDS_PER_TICK === undefined ? 26 * 3_600 : config.INDEX_MAX_SECONDS_PER_TICK,
    // Approximate rates, marked demo-snapshot in every response that uses them, so vs=eur etc. answer offline.
    FX_REFERENCE_FILE: config.FX_REFERENCE_FILE ?? fxDemoSnapshotFile,
    // SIMULATED fund flows; the files say so, and so does every response built from them.
    ETF_FLOWS_DIR: config.ETF_FLOWS_DIR ?? etfFlowsDemoDir,
    CHAINS_CONFIG: config.CHAINS_CONFIG ?? JSON.stringify({ chains: [chain.config] }),
    // Logo URLs absolute, pointing at the demo itself.
    PUBLIC_BASE_URL: config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PORT}`,
    // The read-only SQL endpoint (infra/sql/SQL.md) on ClickHouse's usual HTTP port.
    SQL_PORT: config.SQL_PORT ?? 8123,
  };
  const archivesDir = resolve(config.MDS_DATA_DIR, archiveFiles.demoArchivesDirName);
  return {
    config: demoConfig,
    endpointsOf: (venue) => (isSimulatedVenue(venue.id) ? simulator.endpoints[venue.id] : undefined),
    importHistory: async (store) => {
      await importDemoHistory(store, {
        embedded: demoConfig.CLICKHOUSE_URL === undefined,
        index: indexSettingsFromConfig(demoConfig),
        indexHours: indexSettingsFromConfig(demoConfig).schedule.backfillMs / 3_600_000,
        log: log.child({ part: 'demo-history' }),
        written: () => archiveFiles.readDemoArchives(archivesDir),
        write: () => simulator.writeArchives({ type: 'write-archives', dir: archivesDir, days: demoConfig.DEMO_HISTORY_DAYS, now: Date.now(), seed: Date.now() }),
      });
    },
  };
}

// The simulator's worker thread (simulator/demoWorker.ts) and the demo, as they talk. Written here,
// not there: production code imports nothing of simulator/ but the demo's dynamic imports.

/** The simulator's options the demo sets (simulator/simulator.ts SimulatorOptions). */
export interface DemoSimulatorOptions {
  seed: number;
  tickMs: number;
  tradesPerSecondPerMarket: number;
  universe?: { assets: number };
  perVenue?: Record<string, { retainPrinted: number; retainPrintedMs?: number }>;
}

export interface DemoSimulatorData {
  options: DemoSimulatorOptions;
  logLevel: string;
  prettyLog: boolean;
  shutdownDeadlineMs: number;
}

/** Asks the simulator's thread to write the demo's archive files of `days` of SIMULATED history ending `now`. */
export interface WriteArchivesRequest {
  type: 'write-archives';
  dir: string;
  days: number;
  now: number;
  seed: number;
}

export type DemoSimulatorMessage =
  | { type: 'endpoints'; endpoints: Record<string, VenueEndpoints> }
  | { type: 'archives-written'; archives: DemoArchiveSet }
  | { type: 'archives-failed'; message: string };

/** The simulator in its worker thread: where each venue is reached, and the demo's archive files written on request. */
interface SimulatorThread {
  endpoints: Readonly<Record<string, VenueEndpoints>>;
  writeArchives(request: WriteArchivesRequest): Promise<DemoArchiveSet>;
}

/** Starts the simulator in a worker thread of its own, stopped with the role's other parts ('base'). */
async function startSimulatorThread(ctx: Pick<RoleContext, 'config' | 'log' | 'life' | 'metrics'>, options: DemoSimulatorOptions): Promise<SimulatorThread> {
  let endpoints: Record<string, VenueEndpoints> = {};
  let answer: ((message: DemoSimulatorMessage) => void) | undefined;
  const data: DemoSimulatorData = { options, logLevel: ctx.config.LOG_LEVEL, prettyLog: process.stdout.isTTY === true, shutdownDeadlineMs: ctx.config.SHUTDOWN_DEADLINE_MS };
  // Its own bound, not THREAD_HEAP_MB (the service's threads): the simulator holds every market's
  // model and book and 10 minutes of printed trades, 225-275 MB in use 10 minutes into the demo
  // with 2,000 assets; before its printed trades were kept as columns, near a 512 MB bound its
  // venues went silent.
  const simulatorHeapMb = 1_024;
  const worker = await startWorkerThread<DemoSimulatorMessage>(ctx, 'simulator', 'base', new URL('../../simulator/demoWorker.ts', import.meta.url), data, (message) => {
    if (message.type === 'endpoints') endpoints = message.endpoints;
    else answer?.(message);
  }, simulatorHeapMb);
  return {
    endpoints,
    writeArchives: (request) =>
      new Promise((resolve, reject) => {
        answer = (message) => {
          answer = undefined;
          if (message.type === 'archives-written') resolve(message.archives);
          else if (message.type === 'archives-failed') reject(new Error(`the simulator could not write the demo archives: ${message.message}`));
        };
        worker.postMessage(request);
      }),
  };
}

/**
 * Shows `text` to the person at the terminal, never on stdout (the log stream, which a collector
 * may capture): on stderr when it is a terminal, else on the process's controlling terminal
 * (/dev/tty). False when there is no terminal at all (a service manager, a container without -t).
 */
function tellTerminal(text: string): boolean {
  if (process.stderr.isTTY) {
    process.stderr.write(text);
    return true;
  }
  try {
    const tty = openSync('/dev/tty', 'w');
    try {
      writeSync(tty, text);
    } finally {
      closeSync(tty);
    }
    return true;
  } catch {
    return false;
  }
}

/** Name of the file in MDS_DATA_DIR that keeps the demo's generated key (DEMO_API_KEY unset). */
export const demoKeyFileName = 'demo-api-key';

/** What the generated demo key is named in the store, apart from a DEMO_API_KEY (named 'demo'), so that it alone is replaced. */
const generatedDemoKeyName = 'demo (generated)';

/**
 * The demo's key, provisioned and shown to the person running it at each start; it never goes to
 * the log stream. DEMO_API_KEY when set (not repeated anywhere else). Otherwise one generated key,
 * kept in `<MDS_DATA_DIR>/demo-api-key` (readable by its owner only) and reused by later starts
 * while the store holds it valid; with no terminal, the log names that file.
 */
export async function provisionDemoKey({ config, log }: Pick<RoleContext, 'config' | 'log'>, store: Store, secret: string): Promise<void> {
  const keys = new KeyStore(store, { secret });
  const file = resolve(config.MDS_DATA_DIR, demoKeyFileName);
  const chosen = config.DEMO_API_KEY;
  if (chosen !== undefined) await keys.ensure(chosen, 'demo');
  const key = chosen ?? (await generatedDemoKey(keys, file, log));
  const where = chosen === undefined ? ` (kept in ${file})` : '';
  if (tellTerminal(`\nDemo API key: ${key}${where}\nTry: curl -H 'x-api-key: ${key}' 'http://127.0.0.1:${config.PORT}/v1/prices?ids=bitcoin'\n\n`)) return;
  if (chosen !== undefined) log.info('demo key provisioned: the DEMO_API_KEY you set');
  else log.info({ file }, 'no terminal to show the demo key on: it is in this file');
}

/**
 * The key kept in `file` while the store holds it valid; else a new one, kept there in its place,
 * after revoking every generated demo key still valid (one whose file was lost), so that restarts
 * never pile up valid demo keys.
 */
async function generatedDemoKey(keys: KeyStore, file: string, log: Logger): Promise<string> {
  const kept = readKeptKey(file);
  if (kept !== undefined) {
    if (!(await keys.start(log))) throw new Error('the API keys could not be read from the store');
    keys.close();
    if (keys.verify(kept)) return kept;
  }
  for (const previous of await keys.list()) {
    if (previous.name === generatedDemoKeyName && previous.revokedAt === null) await keys.revoke(previous.prefix);
  }
  const { key } = await keys.create(generatedDemoKeyName);
  mkdirSync(dirname(file), { recursive: true });
  rmSync(file, { force: true }); // a new file, so that it is created with the owner-only mode
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/** The key in `file`, undefined when there is no file. */
function readKeptKey(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** How to reach the read-only SQL endpoint, shown on the terminal only (the password never goes to the log stream). */
export function showSqlAccess({ url, user, password }: SqlAccess): void {
  const where = password.file === undefined ? ' (SQL_PASSWORD)' : ` (kept in ${password.file})`;
  tellTerminal(`SQL (ClickHouse HTTP interface, read-only): ${url} user ${user}, password ${password.password}${where}\nTry: curl -u '${user}:${password.password}' '${url}/?query=SELECT+count()+FROM+trades'\n\n`);
}

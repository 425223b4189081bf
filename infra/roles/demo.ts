import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { etfFlowsDemoDir } from '../../aggregate/jobs/etfFlows.ts';
import { fxDemoSnapshotFile } from '../../aggregate/jobs/fxReference.ts';
import { KeyStore } from '../../api/keys.ts';
import type { VenueDescriptor, VenueEndpoints } from '../../ingest/venue.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store.ts';
import type { RoleContext } from './context.ts';

/** The demo's SIMULATED world, as the demo role runs with it. */
export interface DemoWorld {
  /** The configuration the demo runs with. */
  config: Config;
  /** Where a simulated venue is reached, instead of its own endpoints. */
  endpointsOf(venue: VenueDescriptor): VenueEndpoints | undefined;
  /**
   * A fresh demo store gets 45 days of SIMULATED history, so indicators that need days of data have
   * some (fear & greed needs 13 days before its first reading, and a reading 30 days back for lastMonth).
   */
  seed(store: Store): Promise<void>;
}

/**
 * The demo's SIMULATED world: every native venue's protocol on loopback from one market model, one
 * EVM chain, and the demo's reference files.
 */
export async function startDemoWorld({ config, log, life }: RoleContext): Promise<DemoWorld> {
  // Loaded here and only here, when the demo runs: a deployment may ship without simulator/ (test/layers.test.ts).
  const [{ startSimulator, isSimulatedVenue }, { startDemoChain }, { seedDemoHistory }] = await Promise.all([
    import('../../simulator/simulator.ts'),
    import('../../simulator/evmChain.ts'),
    import('../../simulator/history.ts'),
  ]);
  // Books move every 250 ms (the venues' fastest streams are 100 ms) and each market trades about
  // once a second: 15 venues, the aggregator and the API share a laptop's cores in one process.
  const simulator = await startSimulator({ seed: Date.now(), tickMs: 250, tradesPerSecondPerMarket: 1 });
  life.add('simulator', () => simulator.close());
  // One SIMULATED EVM chain (named so in /v1/chains), indexed by the chain indexer job over JSON-RPC.
  const chain = await startDemoChain();
  life.add('chain-simulator', () => chain.close());
  log.info({ venues: Object.fromEntries(simulator.venues.map((id) => [id, simulator.endpoints(id).ws])) }, 'market simulator started: all demo data is SIMULATED');
  return {
    config: {
      ...config,
      MDS_SIMULATED: true,
      // The index runner backfills the seeded history's last day (enough for the 24 h changes), not a
      // week of it, and in one step: the history is sparse, and live prices wait until it is done.
      INDEX_BACKFILL_HOURS: process.env.INDEX_BACKFILL_HOURS === undefined ? 26 : config.INDEX_BACKFILL_HOURS,
      INDEX_MAX_SECONDS_PER_TICK: process.env.INDEX_MAX_SECONDS_PER_TICK === undefined ? 26 * 3_600 : config.INDEX_MAX_SECONDS_PER_TICK,
      // Approximate rates, marked demo-snapshot in every response that uses them, so vs=eur etc. answer offline.
      FX_REFERENCE_FILE: config.FX_REFERENCE_FILE ?? fxDemoSnapshotFile,
      // SIMULATED fund flows; the files say so, and so does every response built from them.
      ETF_FLOWS_DIR: config.ETF_FLOWS_DIR ?? etfFlowsDemoDir,
      CHAINS_CONFIG: config.CHAINS_CONFIG ?? JSON.stringify({ chains: [chain.config] }),
      // Logo URLs absolute, pointing at the demo itself.
      PUBLIC_BASE_URL: config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PORT}`,
    },
    endpointsOf: (venue) => (isSimulatedVenue(venue.id) ? simulator.endpoints(venue.id) : undefined),
    seed: async (store) => {
      const seeded = await seedDemoHistory(store, { log: log.child({ part: 'demo-history' }), days: 45, stepMs: 900_000, now: Date.now(), seed: Date.now(), priceOf: (t) => simulator.reference(t, 'USD') });
      if (seeded > 0) log.info({ trades: seeded, days: 45 }, 'demo store seeded with SIMULATED history');
    },
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

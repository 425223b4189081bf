import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { etfFlowsDemoDir } from '../../aggregate/jobs/etfFlows.ts';
import { fxDemoSnapshotFile } from '../../aggregate/jobs/fxReference.ts';
import { generateKey, KeyStore } from '../../api/keys.ts';
import { startDemoChain } from '../../test/simulator/evmChain.ts';
import { seedDemoHistory } from '../../test/simulator/history.ts';
import { startSimulator, type Simulator } from '../../test/simulator/simulator.ts';
import type { Config } from '../config.ts';
import type { Store } from '../store.ts';
import type { RoleContext } from './context.ts';

/**
 * The demo's SIMULATED world: every native venue's protocol on loopback from one market model, one
 * EVM chain, and the demo's reference files. Returns the configuration the demo runs with.
 */
export async function startDemoWorld({ config, log, life }: RoleContext): Promise<{ simulator: Simulator; config: Config }> {
  // Books move every 250 ms (the venues' fastest streams are 100 ms) and each market trades about
  // once a second: 15 venues, the aggregator and the API share a laptop's cores in one process.
  const simulator = await startSimulator({ seed: Date.now(), tickMs: 250, tradesPerSecondPerMarket: 1 });
  life.add('simulator', () => simulator.close());
  // One SIMULATED EVM chain (named so in /v1/chains), indexed by the chain indexer job over JSON-RPC.
  const chain = await startDemoChain();
  life.add('chain-simulator', () => chain.close());
  log.info({ venues: Object.fromEntries(simulator.venues.map((id) => [id, simulator.endpoints(id).ws])) }, 'market simulator started: all demo data is SIMULATED');
  return {
    simulator,
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
  };
}

/**
 * A fresh demo store gets 45 days of SIMULATED history, so indicators that need days of data have
 * some (fear & greed needs 13 days before its first reading, and a reading 30 days back for lastMonth).
 */
export async function seedDemo({ log }: RoleContext, store: Store, simulator: Simulator): Promise<void> {
  const seeded = await seedDemoHistory(store, { log: log.child({ part: 'demo-history' }), days: 45, stepMs: 900_000, now: Date.now(), seed: Date.now(), priceOf: (t) => simulator.reference(t, 'USD') });
  if (seeded > 0) log.info({ trades: seeded, days: 45 }, 'demo store seeded with SIMULATED history');
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

/**
 * The demo's key, provisioned and shown once to the person running it; it never goes to the log
 * stream. With no terminal, a generated key is written to `<MDS_DATA_DIR>/demo-api-key` (readable by
 * its owner only) and the log says where; a DEMO_API_KEY the operator set is not repeated anywhere.
 * A generated key is made as `npm run keys -- create` makes one; `secret` is the server's key secret.
 */
export async function provisionDemoKey({ config, log }: RoleContext, store: Store, secret: string): Promise<void> {
  const key = config.DEMO_API_KEY ?? generateKey();
  await new KeyStore(store, { secret }).ensure(key, 'demo');
  if (tellTerminal(`\nDemo API key: ${key}\nTry: curl -H 'x-api-key: ${key}' 'http://127.0.0.1:${config.PORT}/v1/prices?ids=bitcoin'\n\n`)) return;
  if (config.DEMO_API_KEY !== undefined) {
    log.info('demo key provisioned: the DEMO_API_KEY you set');
    return;
  }
  const file = resolve(config.MDS_DATA_DIR, 'demo-api-key');
  mkdirSync(dirname(file), { recursive: true });
  rmSync(file, { force: true }); // a new file, so that it is created with the owner-only mode
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  log.info({ file }, 'no terminal to show the demo key on: it is in this file');
}

// The demo's first start on an empty data directory, as a user runs it (`npm run demo`), timed from
// the spawn: when /v1/coins first answers, when bitcoin's price is first `measured` (from live
// trades, fresh), and when its 30 d change is there (the SIMULATED history is in). Then the same
// data directory is started again (a later start: nothing to import). Prints one line per start.
//   node test/bench/demoStart.bench.ts
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { roleCommand } from '../support/roleCommand.ts';
import { stopChild } from '../support/stopChild.ts';

const key = 'mds_demoStartBench0123456789abcdefgh';
const limitMs = 600_000;

interface Coin {
  measured?: boolean;
  price_change_percentage_30d_in_currency?: number | null;
}

interface Timings {
  coinsMs?: number;
  measuredMs?: number;
  change30dMs?: number;
}

async function bitcoin(port: number): Promise<Coin | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v1/coins?ids=bitcoin`, { headers: { 'x-api-key': key } });
    if (res.status !== 200) return undefined;
    const body = (await res.json()) as { coins: Coin[] };
    return body.coins[0] ?? {};
  } catch {
    return undefined;
  }
}

/** Starts the demo on `dir`, polls until every time is known (or the limit), stops it. */
async function timedStart(dir: string, port: number): Promise<Timings> {
  const started = performance.now();
  // As `npm run demo` starts it (roleCommand).
  const demo = roleCommand('demo', [], { ...process.env, MDS_DATA_DIR: dir, PORT: String(port), DEMO_API_KEY: key, QUOTA_PER_HOUR: '1000000', LOG_LEVEL: 'info' });
  const child = spawn(process.execPath, demo.argv, { env: demo.env, stdio: ['ignore', 'ignore', 'inherit'] });
  const times: Timings = {};
  const at = () => Math.round(performance.now() - started);
  try {
    while (performance.now() - started < limitMs && child.exitCode === null) {
      const coin = await bitcoin(port);
      if (coin) times.coinsMs ??= at();
      if (coin?.measured) times.measuredMs ??= at();
      if (typeof coin?.price_change_percentage_30d_in_currency === 'number') times.change30dMs ??= at();
      if (times.coinsMs !== undefined && times.measuredMs !== undefined && times.change30dMs !== undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await stopChild(child);
  }
  return times;
}

const seconds = (ms: number | undefined) => (ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`);
const dir = mkdtempSync(join(tmpdir(), 'mds-demo-start-'));
const port = 20_000 + Math.floor(Math.random() * 20_000);
try {
  for (const which of ['first start (empty data directory)', 'second start (same data directory)']) {
    const t = await timedStart(dir, port);
    console.log(`${which}: /v1/coins answers ${seconds(t.coinsMs)}, bitcoin measured ${seconds(t.measuredMs)}, its 30 d change ${seconds(t.change30dMs)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, expect, test } from 'vitest';
import { createKafkaBus } from '../../infra/bus/kafkaBus.ts';
import { createLogger } from '../../infra/log.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { copyStoreTemplate } from '../support/storeTemplate.ts';

const brokers = process.env.MDS_TEST_KAFKA_BROKERS;
const dataDir = mkdtempSync(join(tmpdir(), 'mds-crash-'));
// The run's migrated store where there is one: each sink's migration then finds nothing to apply.
copyStoreTemplate(dataDir);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function runSink(env: Record<string, string>): Promise<{ code: number | null; signal: string | null; lines: Record<string, number>[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'sinkProcess.ts')], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      resolve({ code, signal, lines: out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)) }),
    );
  });
}

test('an aggregator killed between insert and commit counts every trade exactly once after restart', async () => {
  expect(brokers, 'MDS_TEST_KAFKA_BROKERS must point at a Kafka-protocol broker (npm test starts one)').toBeTruthy();
  // A venue and asset of our own: the topic is shared with other tests.
  const venue = `crash-${randomUUID().slice(0, 8)}`;
  const total = 2_000;
  const bus = await createKafkaBus({ brokers: brokers!.split(','), log: createLogger('warn') });
  const t0 = Date.now() - 60_000;
  const trades: TradeEvent[] = Array.from({ length: total }, (_, i) => ({
    type: 'trade',
    venue,
    market: `M${i % 3}USDT`,
    asset: venue,
    quote: 'USDT',
    tradeId: String(i),
    price: 100 + (i % 7),
    quantity: 0.5 + (i % 4),
    side: i % 2 ? 'buy' : 'sell',
    ts: t0 + i * 10,
    receivedAt: t0 + i * 10 + 1,
  }));
  bus.publish(trades);
  await bus.flush();
  await bus.close();

  const env = { DATA_DIR: dataDir, BROKERS: brokers!, GROUP: `crash-${venue}`, VENUE: venue, EXPECTED: String(total) };
  const crashed = await runSink({ ...env, CRASH_AT_COMMIT: '1' });
  expect(crashed.signal).toBe('SIGKILL');
  const insertedBeforeCrash = crashed.lines.find((l) => 'insertedBeforeCrash' in l)?.insertedBeforeCrash ?? 0;
  expect(insertedBeforeCrash, JSON.stringify(crashed)).toBeGreaterThan(0);

  const restarted = await runSink(env);
  expect(restarted.code).toBe(0);
  const counts = restarted.lines.find((l) => 'raw' in l)!;
  // The restart re-read what the crashed run had inserted and left it out.
  expect(counts.duplicates).toBeGreaterThanOrEqual(insertedBeforeCrash);
  expect(counts).toMatchObject({ raw: total, distinctTrades: total, candles1m: total, candles1w: total, marketSecondTrades: total });
}, 120_000);

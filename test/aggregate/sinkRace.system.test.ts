// Exactly once when an aggregator dies with an insert in flight (issue #30). A trade sink over Kafka
// writes to a ClickHouse HTTP endpoint (test/support/clickhouseFront.ts over chDB) that parks its
// first trades insert; the sink is killed; its replacement takes the partitions over, reads the
// table and stores what it was handed; only then does the parked insert run, as a server may still
// complete the insert of a client that died. The table must hold every trade once.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createKafkaBus } from '../../infra/bus/kafkaBus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { createLogger } from '../../infra/log.ts';
import { migrate } from '../../infra/migrate.ts';
import { openStore, type Store } from '../../infra/store.ts';
import { startClickHouseFront, type ClickHouseFront } from '../support/clickhouseFront.ts';
import { copyStoreTemplate } from '../support/storeTemplate.ts';
import { untilValue } from '../support/until.ts';

const brokers = process.env.MDS_TEST_KAFKA_BROKERS;
const dataDir = mkdtempSync(join(tmpdir(), 'mds-sink-race-'));
let front: ClickHouseFront;
let store: Store;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // The run's migrated store where there is one: the migration through the front then finds nothing to apply.
  copyStoreTemplate(dataDir);
  front = await startClickHouseFront(dataDir);
  store = await openStore({ MDS_DATA_DIR: '', CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: front.url });
  await migrate(store);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await store?.close();
  await front?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface SinkProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** A trade sink in a process of its own (test/aggregate/sinkProcess.ts), on the front's store. */
function startSink(env: Record<string, string>): SinkProcess {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'sinkProcess.ts')], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => out, exited };
}

const countsOf = async (venue: string) =>
  (
    await store.rows<{ raw: number; distinct: number; candles: number }>(
      `SELECT
         (SELECT count() FROM trades WHERE venue = {venue:String}) AS raw,
         (SELECT uniqExact(market, trade_id) FROM trades WHERE venue = {venue:String}) AS distinct,
         (SELECT sum(trade_count) FROM candles_1m WHERE venue = {venue:String}) AS candles`,
      { venue },
    )
  )[0]!;

test('the insert of a killed aggregator, landing after its replacement read the table, adds nothing', async () => {
  expect(brokers, 'MDS_TEST_KAFKA_BROKERS must point at a Kafka-protocol broker (npm test starts one)').toBeTruthy();
  // A venue and asset of our own: the trades topic is shared with other tests.
  const venue = `race-${randomUUID().slice(0, 8)}`;
  const before = 600;
  const total = 1_200;
  const t0 = Date.now() - 120_000;
  const trades: TradeEvent[] = Array.from({ length: total }, (_, i) => ({
    type: 'trade',
    venue,
    market: `M${i % 3}USDT`,
    asset: venue,
    quote: 'USDT',
    tradeId: String(i),
    price: 100 + (i % 7),
    quantity: 1,
    side: i % 2 ? 'buy' : 'sell',
    ts: t0 + i * 10,
    receivedAt: t0 + i * 10 + 1,
  }));
  const publisher = await createKafkaBus({ brokers: brokers!.split(','), log: createLogger('warn') });
  publisher.publish(trades.slice(0, before));
  await publisher.flush();

  const env = { STORE_URL: front.url, BROKERS: brokers!, GROUP: `race-${venue}`, VENUE: venue, EXPECTED: String(total) };
  // The first insert of our trades is parked at the store, then its sender dies.
  const parked = front.hold((sql, data) => /^INSERT INTO trades\b/.test(sql) && data.includes(`"${venue}"`));
  const first = startSink(env);
  const held = await Promise.race([parked, first.exited.then(() => Promise.reject(new Error(`the first sink exited:\n${first.output()}`)))]);
  first.child.kill('SIGKILL');
  await first.exited;
  // Trades go on while no aggregator runs: the replacement is handed more than the dead one had.
  publisher.publish(trades.slice(before));
  await publisher.flush();
  await publisher.close();

  // The replacement takes over once the group gives up on the killed member (6 s), reads the
  // table (which does not hold the parked rows) and stores every trade of the topic once. It cuts
  // its batches otherwise (by time, over larger batches), as any member may.
  const second = startSink({ ...env, BATCH_ROWS: '5000', BATCH_MS: '2000' });
  const stored = await untilValue(async () => {
    const counts = await countsOf(venue);
    return counts.distinct === total ? counts : undefined;
  }, 'the replacement storing every trade', { timeoutMs: 60_000, everyMs: 200, context: () => second.output() });
  expect(stored.raw).toBe(total);
  expect(await second.exited).toEqual({ code: 0, signal: null });
  // It sent the parked insert's rows again, under the dead member's token.
  const summary = JSON.parse(second.output().split('\n').find((l) => l.includes('"repeatedInserts"'))!) as { repeatedInserts: number };
  expect(summary.repeatedInserts).toBeGreaterThanOrEqual(1);

  // Now the dead member's insert lands.
  await held.release();
  expect(await countsOf(venue)).toEqual({ raw: total, distinct: total, candles: total });
  const duplicates = await store.rows<{ n: number }>(
    'SELECT count() AS n FROM (SELECT venue, market, trade_id FROM trades GROUP BY venue, market, trade_id HAVING count() > 1)',
  );
  expect(duplicates).toEqual([{ n: 0 }]);
}, 150_000);

// End-to-end trades/s through the embedded pipeline (in-process bus -> trade sink -> chDB with the
// candle and index-price views) next to the raw chDB insert rate of the same rows in the same run.
// Usage: npm run bench [-- trades]   (default 200000)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import { createLogger } from '../../infra/log.ts';
import { migrate } from '../../infra/migrate.ts';
import { openStore } from '../../infra/store.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { startTradeSink } from '../../aggregate/tradeSink.ts';
import { timeRawInsert } from './rawInsert.ts';

const total = Number(process.argv[2] ?? 200_000);
const batchRows = 10_000;
const assets = 30;
const dir = mkdtempSync(join(tmpdir(), 'mds-bench-'));
const store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
await migrate(store);

// Both runs get the same trades; asset names differ so neither run sees the other's rows.
function makeTrades(prefix: string): TradeEvent[] {
  const t0 = Date.now() - 3_600_000;
  return Array.from({ length: total }, (_, i) => ({
    type: 'trade',
    venue: 'bench',
    market: `A${i % assets}USDT`,
    asset: `${prefix}-${i % assets}`,
    quote: 'USDT',
    tradeId: String(i),
    price: 100 + Math.sin(i / 1000) * 5,
    quantity: 0.01 + (i % 97) / 100,
    side: i % 2 ? 'buy' : 'sell',
    ts: t0 + Math.floor((i * 3_600_000) / total),
    receivedAt: t0 + Math.floor((i * 3_600_000) / total) + 2,
  }));
}

// Warm-up: the first inserts into fresh tables are slower; neither measured run should pay for them.
await timeRawInsert(store, makeTrades('warm').slice(0, 2 * batchRows), batchRows, 'bench-warm');
const rawSeconds = await timeRawInsert(store, makeTrades('raw'), batchRows, 'bench-raw');

const events = makeTrades('e2e');
const bus = createMemoryBus({ maxRecordsPerTopic: total, maxBytesPerTopic: Number.MAX_SAFE_INTEGER });
const sink = await startTradeSink({ bus, store, log: createLogger('warn'), batchRows, batchMs: 200, group: 'bench' });
const start = performance.now();
for (let i = 0; i < events.length; i += 1_000) bus.publish(events.slice(i, i + 1_000));
while (sink.stats().inserted < total) await new Promise((r) => setTimeout(r, 5));
const e2eSeconds = (performance.now() - start) / 1000;
await sink.stop();
await bus.close();
await store.close();
rmSync(dir, { recursive: true, force: true });

const rawRate = total / rawSeconds;
const e2eRate = total / e2eSeconds;
console.log(`trades: ${total}, batch: ${batchRows} rows, ${assets} assets, node ${process.version}`);
console.log(`raw chDB insert (trades + 7 candle levels + index prices): ${Math.round(rawRate)} rows/s`);
console.log(`end-to-end (bus -> trade sink -> chDB, with dedupe lookups):  ${Math.round(e2eRate)} trades/s`);
console.log(`ratio end-to-end / raw insert: ${(e2eRate / rawRate).toFixed(2)}`);

// A gap is stored no later than the live trade that found it: a collector publishes the gap first,
// and a trade stored alone would, after a crash, start the restart's recovery past the gap
// (test/soak.ts found 76 trades lost that way, a SIGKILL five seconds after a venue outage).
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { GapEvent, TradeEvent } from '../../infra/events.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { Store } from '../../infra/store.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { startGapAndTradeSinks } from '../tradeSink.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(async () => dispose());

const market = { venue: 'coinbase', market: 'XRP-USD', asset: 'ripple', quote: 'USD' };

test('the trades after a gap are stored only once the gap is: the gap sink is flushed before each insert of trades', async () => {
  const bus = createMemoryBus();
  const log = silentLog;
  // The gap sink alone would wait a minute to insert; the trade sink inserts at once.
  const { gaps, trades } = await startGapAndTradeSinks(
    { bus, store, log, batchRows: 1_000, batchMs: 60_000 },
    { bus, store, log, batchRows: 1_000, batchMs: 20 },
  );
  const t0 = Date.UTC(2026, 10, 28, 5, 0, 0);
  const gap: GapEvent = {
    type: 'gap', ...market, gapId: 'g-1', version: 0, cause: 'reconnect', state: 'open',
    fromTs: t0, toTs: t0 + 30_000, fromSeq: 1_180_969, toSeq: 1_181_044, recovered: 0, missing: 76, ts: t0 + 30_000, receivedAt: t0 + 30_001,
  };
  const trade: TradeEvent = { type: 'trade', ...market, tradeId: '1181045', price: 0.5, quantity: 10, side: 'buy', ts: t0 + 30_000, receivedAt: t0 + 30_001 };
  bus.publish([gap]);
  bus.publish([trade]);
  const storedTrades = async () => (await store.rows<{ n: number }>("SELECT count() AS n FROM trades WHERE asset = 'ripple'"))[0]!.n;
  await until(async () => (await storedTrades()) === 1, 'the live trade stored');
  // Read after the trade: had the trade been inserted first, the gap could not be here yet.
  const storedGaps = await store.rows<{ gap_id: string; state: string }>("SELECT gap_id, toString(state) AS state FROM trade_gaps WHERE market = 'XRP-USD'");
  expect(storedGaps).toEqual([{ gap_id: 'g-1', state: 'open' }]);
  await trades.stop();
  await gaps.stop();
  await bus.close();
});

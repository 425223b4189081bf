// A window of candles or chart points that holds a gap of missed trades the collectors could not
// recover says coverage partial and names the gap (issue #26). The gaps go the way the collectors'
// do: gap events on the in-process bus, stored by the gap sink into trade_gaps.
import { expect, test } from 'vitest';
import { startGapSink } from '../../aggregate/gapSink.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { GapEvent } from '../../infra/events.ts';
import type { Store } from '../../infra/store.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { fixtureTrades, hour, minute, T } from './assetMarketFixture.ts';

const day = 24 * hour;

function gap(asset: string, gapId: string, version: number, state: GapEvent['state'], fromTs: number, toTs: number, reason?: GapEvent['reason']): GapEvent {
  return {
    type: 'gap', venue: 'kraken', market: `${asset.toUpperCase()}USD`, asset, quote: 'USD', ts: toTs + minute, receivedAt: toTs + minute,
    gapId, version, cause: 'reconnect', state, fromTs, toTs, recovered: 0, ...(reason ? { reason } : {}),
  };
}

const gaps: GapEvent[] = [
  // bitcoin: 30 to 20 minutes ago, beyond the venue's reach.
  gap('bitcoin', 'b1', 2, 'unrecoverable', T - 30 * minute, T - 20 * minute, 'beyond_rest_reach'),
  // bitcoin: 5 to 4 hours ago, open at first, then recovered: not a hole any more.
  gap('bitcoin', 'b2', 1, 'open', T - 5 * hour, T - 4 * hour),
  { ...gap('bitcoin', 'b2', 2, 'recovered', T - 5 * hour, T - 4 * hour), recovered: 12 },
  // litecoin: three days ago, partly recovered, the venue refusing.
  gap('litecoin', 'l1', 2, 'partly_recovered', T - 3 * day, T - 3 * day + 10 * minute, 'venue_refused'),
];

async function storeGaps(store: Store): Promise<void> {
  const bus = createMemoryBus();
  // Date is held at T here: a full batch flushes at once, the timer would wait forever.
  const sink = await startGapSink({ bus, store, log: silentLog, batchRows: gaps.length, batchMs: 10 });
  bus.publish(gaps);
  await until(() => sink.stats().inserted === gaps.length, 'the gaps stored');
  await sink.stop();
}

const api = useTestApi({
  keyName: 'gap-coverage',
  now: T,
  seed: async (store) => {
    await store.insert('trades', fixtureTrades);
    await storeGaps(store);
  },
});

const bitcoinHole = { venue: 'kraken', market: 'BITCOINUSD', from: T - 30 * minute, to: T - 20 * minute, state: 'unrecoverable', reason: 'beyond_rest_reach' };

test('chart: a window that holds an unrecovered gap is partial and names it; a recovered gap, or one outside the window, leaves it full', async () => {
  const chart = async (query: string) => (await api.get(`/v1/coins/${query}`)).json as { coverage: string; gaps: unknown[] };
  expect(await chart('bitcoin/chart?range=1h')).toMatchObject({ coverage: 'partial', gaps: [bitcoinHole] });
  expect(await chart('bitcoin/chart?range=7d')).toMatchObject({ coverage: 'partial', gaps: [bitcoinHole] });
  // The recovered gap (5 to 4 h ago) is inside 24h too, and not named.
  expect((await chart('bitcoin/chart?range=24h')).gaps).toEqual([bitcoinHole]);
  expect(await chart(`bitcoin/chart?from=${T - 10 * hour}&to=${T - 2 * hour}`)).toMatchObject({ coverage: 'full', gaps: [] });
  expect(await chart('litecoin/chart?range=24h')).toMatchObject({ gaps: [] });
  expect(await chart('litecoin/chart?range=7d')).toMatchObject({
    coverage: 'partial',
    gaps: [{ venue: 'kraken', market: 'LITECOINUSD', from: T - 3 * day, to: T - 3 * day + 10 * minute, state: 'partly_recovered', reason: 'venue_refused' }],
  });
});

test('ohlc: the same rule over the span of the candles served', async () => {
  const ohlc = async (query: string) => (await api.get(`/v1/coins/${query}`)).json as { coverage: string; gaps: unknown[] };
  expect(await ohlc('bitcoin/ohlc?interval=1m')).toMatchObject({ coverage: 'partial', gaps: [bitcoinHole] });
  expect(await ohlc(`bitcoin/ohlc?interval=1h&from=${T - 10 * hour}&to=${T - 2 * hour}`)).toMatchObject({ coverage: 'full', gaps: [] });
  expect(await ohlc(`litecoin/ohlc?interval=1h&from=${T - 4 * day}&to=${T - 2 * day}`)).toMatchObject({ coverage: 'partial', gaps: [expect.objectContaining({ state: 'partly_recovered' })] });
});

test('the status page counts each venue\'s gaps of the last 24 h: open, ended unrecovered, and the trades recovered', async () => {
  const status = (await api.getWithoutKey('/status.json')).json as { venues: { venue: string; gaps: unknown }[] };
  // kraken: b1 unrecoverable and b2 recovered (12 trades) within 24 h; l1 ended three days ago.
  expect(status.venues.find((v) => v.venue === 'kraken')?.gaps).toEqual({ open: 0, unrecovered: 1, recoveredTrades: 12 });
  expect(status.venues.filter((v) => v.venue !== 'kraken').every((v) => JSON.stringify(v.gaps) === JSON.stringify({ open: 0, unrecovered: 0, recoveredTrades: 0 }))).toBe(true);
});

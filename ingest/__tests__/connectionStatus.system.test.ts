// The connection status the collector publishes per market (topic `statuses`), over real sockets
// against the simulator's faults; and the bounds on a venue's event time.
import { describe, expect, test } from 'vitest';
import type { StatusEvent } from '../../infra/events.ts';
import type { Logger } from '../../infra/log.ts';
import { eventTimeCheck } from '../normalize.ts';
import { startLive, until } from './liveVenue.ts';

const fast = { keepAlive: { pingEveryMs: 150, staleAfterMs: 700 }, backoff: { baseMs: 50, maxMs: 200 } };

describe.each(['binance', 'bitstamp'] as const)('%s: connection status per market', (id) => {
  test('connected once streaming, disconnected when the socket drops or a reconnect fails, connected again once it streams', async () => {
    const { sim, collector, events } = await startLive(id, { seed: 31, tuning: fast });
    const statuses = () => events.filter((e): e is StatusEvent => e.type === 'status');
    const followed = collector.markets().map((m) => m.symbol).sort();
    const lastOf = (symbol: string, after = 0) => statuses().findLast((s) => s.market === symbol && s.ts >= after);
    await until(() => followed.every((symbol) => lastOf(symbol)?.connected === true), 'connected at start');
    for (const s of statuses()) expect(s).toMatchObject({ venue: id, asset: collector.markets().find((m) => m.symbol === s.market)!.asset });

    // The venue refuses connections for a while: the drop and every failed attempt say disconnected.
    const droppedAt = Date.now();
    const res = await fetch(new URL('/__simulator/fault', sim.endpoints(id).rest), { method: 'POST', body: JSON.stringify({ fault: 'outage', ms: 1_500 }) });
    expect(res.status).toBe(200);
    await fetch(new URL('/__simulator/fault', sim.endpoints(id).rest), { method: 'POST', body: JSON.stringify({ fault: 'drop' }) });
    await until(() => followed.every((symbol) => lastOf(symbol, droppedAt)?.connected === false), 'disconnected after the drop');
    await until(() => followed.every((symbol) => lastOf(symbol, droppedAt)?.connected === true), 'connected again', 20_000);
    for (const symbol of followed) {
      const since = statuses().filter((s) => s.market === symbol && s.ts >= droppedAt).map((s) => s.connected);
      // Down first (once per failed attempt too), then up once, and only once.
      expect(since[0]).toBe(false);
      expect(since.filter((c) => !c).length, 'a status per refused attempt').toBeGreaterThan(1);
      expect(since.filter((c) => c)).toHaveLength(1);
      expect(since.at(-1)).toBe(true);
    }
    expect(collector.metrics().reconnects).toBeGreaterThanOrEqual(1);
  });
});

describe('event time bounds', () => {
  test('a venue time more than a day before or a minute after its receipt is refused, and logged once', () => {
    const warnings: unknown[] = [];
    const log = { warn: (fields: unknown) => void warnings.push(fields) } as unknown as Logger;
    const timely = eventTimeCheck(log);
    const receivedAt = Date.UTC(2026, 0, 2);
    const at = (ts: number) => timely({ market: 'BTCUSD', ts, receivedAt });
    expect(at(receivedAt - 86_400_000)).toBe(true);
    expect(at(receivedAt + 60_000)).toBe(true);
    expect(warnings).toHaveLength(0);
    expect(at(receivedAt - 86_400_001)).toBe(false);
    expect(at(receivedAt + 60_001)).toBe(false);
    expect(at(0)).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ market: 'BTCUSD', ts: receivedAt - 86_400_001, receivedAt });
  });
});

// The machinery both collectors share, driven directly: the metrics log line and the 10 s rates.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { expect, onTestFinished, test, vi } from 'vitest';
import type { BookEvent, MarketEvent } from '../../infra/events.ts';
import { sharedTuningDefaults, startCollectorShell, type CollectorCounts } from '../collectorKit.ts';
import { until } from '../../test/support/until.ts';

const counts = (over: Partial<CollectorCounts> = {}): CollectorCounts => ({
  connected: true,
  markets: 2,
  unmappedMarkets: 0,
  messages: 0,
  trades: 0,
  liquidations: 0,
  reconnects: 0,
  rotations: 0,
  resyncs: 0,
  bookBufferOverflows: 0,
  unknownMessages: 0,
  recoveredTrades: 0,
  gapsPending: 0,
  gapsRecovered: 0,
  gapsPartlyRecovered: 0,
  gapsUnrecoverable: 0,
  venueErrors: 0,
  lastMessageAt: undefined,
  ...over,
});

test('the metrics log line names the venue once: the logger binds it, the line does not repeat it', async () => {
  const raw: string[] = [];
  // Collectors log through a child that binds the venue, as the ingest role and startCollector do.
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (raw.push(String(chunk)), done()) })).child({ venue: 'kraken' });
  const shell = startCollectorShell({ venueId: 'kraken', bus: { publish: () => {} }, log, tuning: { ...sharedTuningDefaults, metricsLogEveryMs: 50 }, books: () => [], counts: () => counts(), close: async () => {} });
  await until(() => raw.some((l) => l.includes('collector metrics')), 'a metrics line');
  await shell.stop();
  const line = raw.find((l) => l.includes('collector metrics'))!;
  expect(line.match(/"venue":/g)).toHaveLength(1);
  expect(JSON.parse(line)).toMatchObject({ venue: 'kraken', markets: 2, connected: true });
  // The handle's metrics still carry the venue: the ingest role labels its gauges with it.
  expect(shell.metrics().venue).toBe('kraken');
});

test('rates over the sampled seconds, books published each period, nothing after stop', async () => {
  // The shell's timers on a fake clock: 3.2 s pass in no time, and exactly.
  vi.useFakeTimers({ now: 1_700_000_000_000 });
  onTestFinished(() => void vi.useRealTimers());
  let messages = 0;
  const published: MarketEvent[][] = [];
  const book: BookEvent = { type: 'book', venue: 'kraken', market: 'XBT/USD', asset: 'bitcoin', quote: 'USD', ts: 1, receivedAt: 1, bids: [[1, 1]], asks: [[2, 1]] };
  let closed = false;
  const shell = startCollectorShell({
    venueId: 'kraken',
    bus: { publish: (events) => void published.push([...events]) },
    log: pino({ level: 'silent' }),
    tuning: { ...sharedTuningDefaults, bookEveryMs: 100 },
    books: () => [book],
    counts: () => counts({ messages, lastMessageAt: Date.now() - 5_000 }),
    close: async () => void (closed = true),
  });
  expect(shell.metrics().messagesPerSecond).toBe(0);
  const timer = setInterval(() => (messages += 10), 100);
  await vi.advanceTimersByTimeAsync(3_200);
  clearInterval(timer);
  const m = shell.metrics();
  // 100 messages a second, sampled once a second: about 100 over the samples taken so far.
  expect(m.messagesPerSecond).toBeGreaterThan(80);
  expect(m.messagesPerSecond).toBeLessThan(120);
  expect(m.lastMessageAgeMs).toBeGreaterThanOrEqual(5_000);
  expect(published.length).toBeGreaterThanOrEqual(25);
  expect(published.every((batch) => batch.length === 1 && batch[0] === book)).toBe(true);
  await shell.stop();
  expect(closed).toBe(true);
  expect(shell.stopped()).toBe(true);
  const after = published.length;
  await vi.advanceTimersByTimeAsync(300);
  expect(published.length).toBe(after);
});

test('retrying backs off until it succeeds, and gives up when the collector stops', async () => {
  const shell = startCollectorShell({ venueId: 'x', bus: { publish: () => {} }, log: pino({ level: 'silent' }), tuning: { ...sharedTuningDefaults, backoff: { baseMs: 10, maxMs: 20 } }, books: () => [], counts: () => counts(), close: async () => {} });
  const seen: number[] = [];
  expect(await shell.retrying('listing', async (failures) => (seen.push(failures), failures < 3 ? Promise.reject(new Error('down')) : 'ok'))).toBe('ok');
  expect(seen).toEqual([0, 1, 2, 3]);
  let attempts = 0;
  const never = shell.retrying('listing', () => (attempts++, Promise.reject(new Error('down'))));
  await until(() => attempts >= 2, 'a retry');
  await shell.stop();
  const atStop = attempts;
  expect(await never).toBeUndefined();
  // No attempt after the stop.
  expect(attempts).toBe(atStop);
});

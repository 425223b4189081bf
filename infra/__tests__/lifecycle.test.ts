// The process's stop (infra/roles/lifecycle.ts) with parts that stop, hang and throw, on a held
// clock: one deadline for the whole stop, the front first, the parts of a stage all at once, and
// the log naming every part that did not stop.
import { pino } from 'pino';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { Lifecycle, type StopStage } from '../roles/lifecycle.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

interface LogLine {
  level: number;
  msg: string;
  part?: string;
  stage?: string;
  err?: { message: string };
}

function recordingLog() {
  const lines: LogLine[] = [];
  return { log: pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) }), lines };
}

const deadlineMs = 1_000;

/** A lifecycle whose parts say when their stop begins and ends; `hold` keeps a part stopping until `release`. */
function lifecycleOfParts(parts: [name: string, stage: StopStage, how: 'stops' | 'hangs' | 'throws' | 'held'][]) {
  const { log, lines } = recordingLog();
  const life = new Lifecycle(log, deadlineMs);
  const events: string[] = [];
  const releases = new Map<string, () => void>();
  for (const [name, stage, how] of parts) {
    life.add(name, stage, async () => {
      events.push(`begin ${name}`);
      if (how === 'hangs') await new Promise<never>(() => {});
      if (how === 'held') await new Promise<void>((resolve) => releases.set(name, resolve));
      if (how === 'throws') throw new Error(`${name} broke`);
      events.push(`end ${name}`);
    });
  }
  const release = async (name: string) => {
    releases.get(name)!();
    await vi.advanceTimersByTimeAsync(0);
  };
  return { life, lines, events, release };
}

const named = (lines: LogLine[], msg: string) => lines.filter((l) => l.msg === msg).map((l) => l.part);
const notStoppedInTime = 'part did not stop by the shutdown deadline; exiting without it';
const neverReached = 'part not stopped: the shutdown deadline passed before its stage';

test('hung parts in every stage: the whole stop ends at the one deadline, and the log names each part that did not stop', async () => {
  const { life, lines, events } = lifecycleOfParts([
    ['store', 'base', 'stops'],
    ['trade-sink', 'consumers', 'hangs'],
    ['status-sink', 'consumers', 'hangs'],
    ['liquidation-sink', 'consumers', 'hangs'],
    ['index', 'consumers', 'stops'],
    ['api', 'front', 'stops'],
  ]);
  let done = false;
  void life.shutdown('SIGTERM').then(() => (done = true));
  await vi.advanceTimersByTimeAsync(deadlineMs - 1);
  expect(done).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  expect(done).toBe(true);
  // The three hung sinks stopped side by side, each named; the store's stage never came.
  expect(events).toEqual(['begin api', 'end api', 'begin trade-sink', 'begin status-sink', 'begin liquidation-sink', 'begin index', 'end index']);
  expect(named(lines, notStoppedInTime)).toEqual(['trade-sink', 'status-sink', 'liquidation-sink']);
  expect(lines.filter((l) => l.msg === neverReached)).toEqual([expect.objectContaining({ level: 50, part: 'store', stage: 'base' })]);
  expect(lines.at(-1)?.msg).toBe('stopped at the shutdown deadline');
});

test('the front stops first: no other part begins to stop until the API has stopped', async () => {
  const { life, lines, events, release } = lifecycleOfParts([
    ['bus', 'base', 'stops'],
    ['collector:binance', 'sources', 'stops'],
    ['trade-sink', 'consumers', 'stops'],
    ['api', 'front', 'held'],
    ['ops', 'front', 'stops'],
  ]);
  const stopped = life.shutdown('SIGTERM');
  await vi.advanceTimersByTimeAsync(deadlineMs / 2);
  expect(events).toEqual(['begin api', 'begin ops', 'end ops']);
  await release('api');
  await stopped;
  expect(events).toEqual(['begin api', 'begin ops', 'end ops', 'end api', 'begin collector:binance', 'end collector:binance', 'begin trade-sink', 'end trade-sink', 'begin bus', 'end bus']);
  expect(lines.at(-1)?.msg).toBe('stopped');
  expect(lines.filter((l) => l.level >= 50)).toEqual([]);
});

test('the parts of a stage stop all at once: each begins before any ends, and the next stage waits for the last of them', async () => {
  const { life, events, release } = lifecycleOfParts([
    ['store', 'base', 'stops'],
    ['trade-sink', 'consumers', 'held'],
    ['book-sink', 'consumers', 'held'],
    ['index', 'consumers', 'held'],
  ]);
  const stopped = life.shutdown('SIGTERM');
  await vi.advanceTimersByTimeAsync(0);
  expect(events).toEqual(['begin trade-sink', 'begin book-sink', 'begin index']);
  await release('book-sink');
  await release('trade-sink');
  expect(events).toEqual(['begin trade-sink', 'begin book-sink', 'begin index', 'end book-sink', 'end trade-sink']);
  await release('index');
  await stopped;
  expect(events.slice(-2)).toEqual(['begin store', 'end store']);
});

test('a part that throws is logged with its name, and the others and the next stages still stop', async () => {
  const { life, lines, events } = lifecycleOfParts([
    ['store', 'base', 'stops'],
    ['trade-sink', 'consumers', 'throws'],
    ['gap-sink', 'consumers', 'stops'],
  ]);
  await life.shutdown('SIGTERM');
  expect(events).toEqual(['begin trade-sink', 'begin gap-sink', 'end gap-sink', 'begin store', 'end store']);
  expect(lines.filter((l) => l.level >= 50)).toEqual([expect.objectContaining({ msg: 'error while stopping', part: 'trade-sink', err: expect.objectContaining({ message: 'trade-sink broke' }) })]);
  expect(lines.at(-1)?.msg).toBe('stopped');
});

test('a second shutdown (a signal during a fatal error) is the same stop: each part stops once', async () => {
  const { life, events } = lifecycleOfParts([['api', 'front', 'stops']]);
  const first = life.shutdown('uncaught exception');
  const second = life.shutdown('SIGTERM');
  expect(second).toBe(first);
  await second;
  expect(events).toEqual(['begin api', 'end api']);
});

test('a part that takes a second or more to stop is named in the log with its time; a quick one is not', async () => {
  const { log, lines } = recordingLog();
  const life = new Lifecycle(log, 10_000);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  life.add('ingest-worker', 'sources', () => sleep(1_500));
  life.add('trade-sink', 'consumers', () => sleep(999));
  life.add('store', 'base', () => sleep(1_000));
  const stopped = life.shutdown('test');
  await vi.advanceTimersByTimeAsync(5_000);
  await stopped;
  expect(lines.filter((l) => l.msg === 'part took a while to stop')).toEqual([
    expect.objectContaining({ part: 'ingest-worker', ms: 1_500 }),
    expect.objectContaining({ part: 'store', ms: 1_000 }),
  ]);
});

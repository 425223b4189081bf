// The ccxt collector's books without a socket: ccxt's book cache filled by hand, its settlements and
// failures reported as the hooks would, the grace before a redial driven by a hand-held wait.
import ccxt, { type Exchange } from 'ccxt';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { expect, test } from 'vitest';
import { CcxtBooks } from '../ccxtBooks.ts';
import type { VenueMarket } from '../venue.ts';

const btc: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
const eth: VenueMarket = { symbol: 'ETHUSDT', base: 'ETH', quote: 'USDT', asset: 'ethereum', contractSize: '0.01' };

function books(options: { resyncGraceMs?: number; maxGraceMs?: number } = {}) {
  const exchange = new (ccxt.pro as unknown as Record<string, new (config: object) => Exchange>).bitget!({});
  const waits: { ms: number; done: () => void }[] = [];
  const redials: string[] = [];
  const lines: Record<string, unknown>[] = [];
  let stopped = false;
  const kept = new CcxtBooks({
    venueId: 'bitget',
    exchange,
    byUnified: new Map([
      ['BTC/USDT', btc],
      ['ETH/USDT:USDT', eth],
    ]),
    log: pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) })),
    resyncGraceMs: options.resyncGraceMs ?? 2_000,
    maxGraceMs: options.maxGraceMs ?? 5_000,
    wait: (ms) => new Promise<void>((done) => void waits.push({ ms, done })),
    stopped: () => stopped,
    redial: async (reason) => void redials.push(reason),
  });
  /** Ends the oldest pending wait and lets the loop go on. */
  const endWait = async () => {
    waits.shift()!.done();
    await new Promise((r) => setImmediate(r));
  };
  return { exchange, kept, waits, redials, lines, endWait, stop: () => (stopped = true) };
}

const book = (symbol: string, timestamp: number | undefined) => ({ symbol, timestamp, bids: [[100, 2], [99, 1], [98, 5]], asks: [[101, 300], [102, 1]] });

test('books are published once ccxt settled a watcher with them: cut to the depth, contracts in base units, at their own time', () => {
  const { exchange, kept } = books();
  exchange.orderbooks['BTC/USDT'] = book('BTC/USDT', 1_700_000_000_000) as never;
  exchange.orderbooks['ETH/USDT:USDT'] = book('ETH/USDT:USDT', undefined) as never;
  exchange.orderbooks['SOL/USDT'] = book('SOL/USDT', 1) as never;
  expect(kept.events(50)).toEqual([]);
  kept.settled('BTC/USDT');
  kept.settled('ETH/USDT:USDT');
  // A market not followed is not published.
  kept.settled('SOL/USDT');
  const events = kept.events(2);
  expect(events[0]).toEqual({ type: 'book', venue: 'bitget', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000, receivedAt: events[0]!.receivedAt, bids: [[100, 2], [99, 1]], asks: [[101, 300], [102, 1]] });
  // No book time: the time it was settled stands in.
  expect(events[1]).toMatchObject({ market: 'ETHUSDT', ts: events[1]!.receivedAt, bids: [[100, 0.02], [99, 0.01]], asks: [[101, 3], [102, 0.01]] });
  expect(events).toHaveLength(2);
});

test("a lost connection drops the markets' books, ccxt's copies included, until they are settled again", () => {
  const { exchange, kept } = books();
  exchange.orderbooks['BTC/USDT'] = book('BTC/USDT', 1) as never;
  kept.settled('BTC/USDT');
  kept.lost(['BTC/USDT']);
  expect(exchange.orderbooks['BTC/USDT']).toBeUndefined();
  expect(kept.events(50)).toEqual([]);
});

test('a broken book is one counted, logged resync per market the error names, and is no longer published', () => {
  const { exchange, kept, lines } = books();
  exchange.orderbooks['BTC/USDT'] = book('BTC/USDT', 1) as never;
  kept.settled('BTC/USDT');
  kept.broken(new ccxt.ChecksumError('bitget BTC/USDT checksum'));
  kept.broken(new ccxt.ChecksumError('bitget BTC/USDT checksum again'));
  expect(kept.resyncs).toBe(1);
  expect(kept.events(50)).toEqual([]);
  expect(lines.filter((l) => l.msg === 'book resync')).toEqual([expect.objectContaining({ symbol: 'BTC/USDT', reason: 'bitget BTC/USDT checksum', level: 40 })]);
  kept.broken(new ccxt.InvalidNonce('nothing we follow'));
  expect(kept.resyncs).toBe(1);
});

test('a book that comes back within the grace needs no redial', async () => {
  const { kept, waits, redials, endWait } = books();
  kept.broken(new ccxt.ChecksumError('BTC/USDT'));
  expect(waits.map((w) => w.ms)).toEqual([2_000]);
  kept.settled('BTC/USDT');
  await endWait();
  expect(redials).toEqual([]);
  expect(waits).toEqual([]);
});

test('a book still out after the grace redials, again after twice the wait (up to the cap), until it comes back', async () => {
  const { kept, waits, redials, endWait } = books({ maxGraceMs: 5_000 });
  kept.broken(new ccxt.InvalidNonce('ETH/USDT:USDT'));
  await endWait();
  expect(redials).toEqual(['book of ETH/USDT:USDT out of sync: a new connection brings fresh snapshots']);
  expect(waits.map((w) => w.ms)).toEqual([4_000]);
  await endWait();
  expect(waits.map((w) => w.ms)).toEqual([5_000]);
  expect(redials).toHaveLength(2);
  kept.settled('ETH/USDT:USDT');
  await endWait();
  expect(redials).toHaveLength(2);
  expect(waits).toEqual([]);
});

test('a second failure within the grace after the book came back is the same resync, whose wait then redials; after the grace a new one', async () => {
  const { kept, endWait, waits, redials } = books({ resyncGraceMs: 60_000 });
  kept.broken(new ccxt.ChecksumError('BTC/USDT'));
  kept.settled('BTC/USDT');
  kept.broken(new ccxt.ChecksumError('BTC/USDT'));
  expect(kept.resyncs).toBe(1);
  expect(waits).toHaveLength(1);
  await endWait();
  expect(redials).toHaveLength(1);
  expect(waits.map((w) => w.ms)).toEqual([5_000]);
  const quick = books({ resyncGraceMs: 0 });
  quick.kept.broken(new ccxt.ChecksumError('BTC/USDT'));
  quick.kept.settled('BTC/USDT');
  await new Promise((r) => setTimeout(r, 2));
  quick.kept.broken(new ccxt.ChecksumError('BTC/USDT'));
  expect(quick.kept.resyncs).toBe(2);
});

test('no redial once the collector stopped', async () => {
  const { kept, redials, endWait, stop } = books();
  kept.broken(new ccxt.ChecksumError('BTC/USDT'));
  stop();
  await endWait();
  expect(redials).toEqual([]);
});

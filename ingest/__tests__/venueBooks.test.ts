// A native collector's books without a socket: book messages handed in, the socket a recording
// stub, REST snapshots from canned JSON. The venue rules are written for the test: a strict id chain.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { BookMessage, BookRule, RestSnapshot, VenueMarket } from '../venue.ts';
import { VenueBooks, type BookChannel } from '../venueBooks.ts';
import { cannedIo } from './cannedIo.ts';

const btc: VenueMarket = { symbol: 'BTC', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' };
// 0.5 ETH a contract: book quantities are converted to base units.
const eth: VenueMarket = { symbol: 'ETH', base: 'ETH', quote: 'USD', asset: 'ethereum', contractSize: '0.5' };

const chain: BookRule['sequence'] = (lastId, u) => (u.lastId! <= lastId ? 'stale' : u.firstId === lastId + 1 ? 'apply' : 'gap');
const update = (symbol: string, fields: Partial<BookMessage>): BookMessage => ({ kind: 'book', symbol, snapshot: false, bids: [], asks: [], ...fields });
const snapshot = (symbol: string, lastId: number, fields: Partial<BookMessage> = {}) => update(symbol, { snapshot: true, lastId, bids: [['100', '1']], asks: [['101', '2']], ...fields });

/** A socket stub: records what is sent; `resubscribeMessages` as the venue (or its session) has it. */
function channel(resubscribe: boolean): BookChannel & { sent: string[][] } {
  const sent: string[][] = [];
  return { sent, resubscribeMessages: resubscribe ? (symbols) => symbols.map((s) => `resubscribe ${s}`) : undefined, send: (messages) => void sent.push([...messages]) };
}

function books(rule: BookRule, options: { io?: ReturnType<typeof cannedIo>['io']; channels?: ('trades' | 'books')[]; concurrency?: number } = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'debug' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const kept = new VenueBooks({
    venue: { id: 'testvenue', book: rule, channels: options.channels ?? ['trades', 'books'] },
    endpoints: { ws: 'wss://v', rest: 'https://v' },
    io: options.io ?? cannedIo({}).io,
    log,
    snapshotConcurrency: options.concurrency ?? 4,
    stopped: () => false,
  });
  kept.follow(btc);
  kept.follow(eth);
  return { kept, lines };
}

describe('stream snapshots', () => {
  const rule: BookRule = { sequence: chain, resubscribe: (symbols) => symbols.map((s) => `venue resubscribe ${s}`) };

  test('only synced books are published, in the order followed: at the time of their last message, cut to the depth, in base units', () => {
    const { kept } = books(rule);
    const socket = channel(true);
    expect(kept.events(50)).toEqual([]);
    kept.onBook(socket, snapshot('ETH', 10, { ts: 5_000, bids: [['100', '4'], ['99', '2'], ['98', '2']] }), 6_000);
    // An update without a venue time: its receive time stands in.
    kept.onBook(socket, update('ETH', { firstId: 11, lastId: 11, asks: [['102', '6']] }), 7_000);
    kept.onBook(socket, snapshot('BTC', 1), 8_000);
    expect(kept.events(2)).toEqual([
      { type: 'book', venue: 'testvenue', market: 'BTC', asset: 'bitcoin', quote: 'USD', ts: 8_000, receivedAt: 8_000, bids: [[100, 1]], asks: [[101, 2]] },
      { type: 'book', venue: 'testvenue', market: 'ETH', asset: 'ethereum', quote: 'USD', ts: 7_000, receivedAt: 7_000, bids: [[100, 2], [99, 1]], asks: [[101, 1], [102, 3]] },
    ]);
    // A stale update changes neither the book nor its time.
    kept.onBook(socket, update('ETH', { firstId: 11, lastId: 11, asks: [['103', '1']] }), 9_000);
    expect(kept.events(50).find((e) => e.market === 'ETH')).toMatchObject({ ts: 7_000, asks: [[101, 1], [102, 3]] });
  });

  test('an update before any snapshot asks for one on its socket, at most every 10 s; the snapshot lets the next request go at once', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      const { kept } = books(rule);
      const socket = channel(true);
      kept.onBook(socket, update('BTC', { firstId: 1, lastId: 1 }), 0);
      kept.onBook(socket, update('BTC', { firstId: 2, lastId: 2 }), 0);
      expect(socket.sent).toEqual([['resubscribe BTC']]);
      vi.setSystemTime(1_000_000 + 10_000);
      kept.onBook(socket, update('BTC', { firstId: 3, lastId: 3 }), 0);
      expect(socket.sent).toEqual([['resubscribe BTC'], ['resubscribe BTC']]);
      kept.onBook(socket, snapshot('BTC', 3), 0);
      kept.onBook(socket, update('BTC', { firstId: 5, lastId: 5 }), 0);
      expect(socket.sent.at(-1)).toEqual(['resubscribe BTC']);
      expect(socket.sent).toHaveLength(3);
      expect(kept.resyncs).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  test('a gap is a logged, counted resync that asks for the book again; a venue without resubscription sends nothing', () => {
    const { kept, lines } = books(rule);
    const socket = channel(true);
    kept.onBook(socket, snapshot('BTC', 1), 0);
    kept.onBook(socket, update('BTC', { firstId: 3, lastId: 3 }), 0);
    expect(lines.find((l) => l.msg === 'book resync')).toMatchObject({ symbol: 'BTC', reason: 'sequence gap', level: 40 });
    expect(socket.sent).toEqual([['resubscribe BTC']]);
    expect(kept.events(50).map((e) => e.market)).toEqual([]);
    const mute = channel(false);
    kept.onBook(mute, snapshot('ETH', 1), 0);
    kept.onBook(mute, update('ETH', { firstId: 3, lastId: 3 }), 0);
    expect(mute.sent).toEqual([]);
    expect(kept.resyncs).toBe(2);
  });

  /** Both markets' books synced from stream snapshots on one socket. */
  function bothSynced() {
    const { kept } = books(rule);
    const socket = channel(true);
    kept.onBook(socket, snapshot('BTC', 1), 0);
    kept.onBook(socket, snapshot('ETH', 1), 0);
    return { kept, socket };
  }

  test('a socket that (re)opened: its books start over, uncounted, and its subscription stands for the snapshot requests', () => {
    const { kept, socket } = bothSynced();
    kept.restart(['BTC']);
    expect(kept.events(50).map((e) => e.market)).toEqual(['ETH']);
    kept.onBook(socket, update('BTC', { firstId: 2, lastId: 2 }), 0);
    expect(socket.sent).toEqual([]);
    expect(kept.resyncs).toBe(0);
  });

  test('messages lost on a socket: each of its books is a counted resync, asked for again at once', () => {
    const { kept, socket } = bothSynced();
    kept.invalidate(['BTC', 'ETH', 'SOL'], socket);
    expect(kept.events(50)).toEqual([]);
    expect(kept.resyncs).toBe(2);
    expect(socket.sent).toEqual([['resubscribe BTC', 'resubscribe ETH', 'resubscribe SOL']]);
  });

  test('a delisted market is dropped: its messages are ignored; a venue without book channels keeps no book', () => {
    const { kept } = books(rule);
    const socket = channel(true);
    kept.drop('BTC');
    kept.onBook(socket, update('BTC', { firstId: 1, lastId: 1 }), 0);
    kept.onBook(socket, snapshot('BTC', 1), 0);
    expect(socket.sent).toEqual([]);
    expect(kept.events(50)).toEqual([]);
    const tradesOnly = books(rule, { channels: ['trades'] }).kept;
    tradesOnly.onBook(socket, snapshot('BTC', 1), 0);
    expect(tradesOnly.events(50)).toEqual([]);
  });
});

describe('REST snapshots', () => {
  const rest: NonNullable<BookRule['restSnapshot']> = { url: (base, symbol) => `${base}/depth/${symbol}`, parse: (json) => json as RestSnapshot };
  const rule: BookRule = { restSnapshot: rest, sequence: chain };
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  /** Books whose REST snapshots are answered from `bodies` (by URL), and the socket of their stream. */
  function restBooks(bodies: Record<string, unknown>) {
    const { io, asked } = cannedIo(bodies);
    return { ...books(rule, { io }), asked, socket: channel(true) };
  }

  test('buffered updates ask for the REST snapshot once; it syncs the book with the updates after it', async () => {
    const { kept, asked, socket } = restBooks({ 'https://v/depth/BTC': { lastId: 5, bids: [['100', '1']], asks: [['101', '1']] } });
    kept.onBook(socket, update('BTC', { firstId: 5, lastId: 5, bids: [['99', '3']] }), 1_000);
    kept.onBook(socket, update('BTC', { firstId: 6, lastId: 6, bids: [['98', '3']] }), 2_000);
    expect(asked).toEqual(['https://v/depth/BTC']);
    const answeredAt = Date.now();
    await vi.advanceTimersByTimeAsync(0);
    // Synced from REST with no stream message since: published as of the snapshot's answer.
    expect(kept.events(50)).toMatchObject([{ market: 'BTC', ts: answeredAt, receivedAt: answeredAt, bids: [[100, 1], [98, 3]], asks: [[101, 1]] }]);
    kept.onBook(socket, update('BTC', { firstId: 7, lastId: 7, asks: [['102', '1']] }), 3_000);
    expect(kept.events(50)).toEqual([{ type: 'book', venue: 'testvenue', market: 'BTC', asset: 'bitcoin', quote: 'USD', ts: 3_000, receivedAt: 3_000, bids: [[100, 1], [98, 3]], asks: [[101, 1], [102, 1]] }]);
    expect(socket.sent).toEqual([]);
  });

  test('a snapshot older than the buffer is not usable: on a quiet market it is fetched again after the pause and syncs', async () => {
    // The venue's snapshot lags its stream at first (lastId 3 before the buffered 5), then catches up.
    const answers = [{ lastId: 3, bids: [], asks: [] }, { lastId: 5, bids: [['100', '1']], asks: [['101', '1']] }];
    const asked: string[] = [];
    const io = { ...cannedIo({}).io, getJson: async (url: string) => (asked.push(url), answers.shift()) };
    const { kept, lines } = books(rule, { io });
    const socket = channel(true);
    kept.onBook(socket, update('BTC', { firstId: 5, lastId: 5 }), 500);
    await vi.advanceTimersByTimeAsync(0);
    expect(lines.find((l) => l.msg === 'book snapshot not usable yet')).toMatchObject({ symbol: 'BTC', outcome: 'refetch' });
    expect(kept.events(50)).toEqual([]);
    // No further update comes: the pause over, the market is asked for again on its own.
    await vi.advanceTimersByTimeAsync(999);
    expect(asked).toEqual(['https://v/depth/BTC']);
    await vi.advanceTimersByTimeAsync(1);
    expect(asked).toEqual(['https://v/depth/BTC', 'https://v/depth/BTC']);
    // Synced with no update after it: published at once, as of the snapshot's answer.
    expect(kept.events(50)).toMatchObject([{ market: 'BTC', ts: Date.now(), bids: [[100, 1]], asks: [[101, 1]] }]);
    kept.onBook(socket, update('BTC', { firstId: 6, lastId: 6, bids: [['99', '2']] }), 7_000);
    expect(kept.events(50)).toMatchObject([{ market: 'BTC', ts: 7_000, bids: [[100, 1], [99, 2]], asks: [[101, 1]] }]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(asked).toHaveLength(2);
  });

  test('a failed fetch is logged; the market is asked for again once the pause is over, with no further update', async () => {
    const { kept, lines, asked, socket } = restBooks({});
    kept.onBook(socket, update('ETH', { firstId: 1, lastId: 1 }), 0);
    await vi.advanceTimersByTimeAsync(0);
    expect(lines.find((l) => l.msg === 'book snapshot failed')).toMatchObject({ symbol: 'ETH', err: 'no canned body for https://v/depth/ETH' });
    kept.onBook(socket, update('ETH', { firstId: 2, lastId: 2 }), 0);
    expect(asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(asked).toEqual(['https://v/depth/ETH', 'https://v/depth/ETH']);
  });
});

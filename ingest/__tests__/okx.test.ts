import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { OrderBook } from '../orderBook.ts';
import { selectMarkets, toLevels, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { okx, okxSwap, parseInstruments } from '../venues/okx.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, placedSide, recordedSession, tradesOf } from './recorded.ts';

const parseAll = (name: string) => frames('okx', name).flatMap(okx.parse);
const swapMarkets = selectMarkets(okxSwap, parseInstruments(fixture('okx', 'rest_instruments_swap.json'), 'SWAP'));
const btcSwap = swapMarkets.markets.find((m) => m.symbol === 'BTC-USDT-SWAP')!;
const ethSwap = swapMarkets.markets.find((m) => m.symbol === 'ETH-USDT-SWAP')!;

describe('okx messages', () => {
  test('trades: taker side as sent; swap sizes are contracts, converted with ctVal to base units', () => {
    const [first, second, swap] = parseAll('ws_trade.json') as Extract<VenueMessage, { kind: 'trade' }>[];
    expect(first).toEqual({ kind: 'trade', symbol: 'BTC-USDT', tradeId: '730915421', price: '87012.4', quantity: '0.01520000', side: 'sell', ts: 1767225600121 });
    expect(second).toMatchObject({ tradeId: '730915422', side: 'buy', quantity: '0.2' });
    const spot: VenueMarket = { symbol: 'BTC-USDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
    expect(toTradeEvent('okx', spot, first!, 1)).toMatchObject({ quantity: 0.0152, price: 87012.4 });
    // 12 contracts of 0.1 ETH: 1.2 ETH, exactly (not 1.2000000000000002).
    expect(ethSwap.contractSize).toBe('0.1');
    expect(toTradeEvent('okx-swap', ethSwap, swap!, 1)).toMatchObject({ market: 'ETH-USDT-SWAP', asset: 'ethereum', quantity: 1.2, side: 'sell', ts: 1767225600456 });
  });

  test('liquidations: the position named by posSide, or in net mode the one a forced order closes; sizes in contracts', () => {
    const [long, net] = parseAll('ws_liquidation.json') as Extract<VenueMessage, { kind: 'liquidation' }>[];
    expect(long).toEqual({ kind: 'liquidation', symbol: 'BTC-USDT-SWAP', liquidationId: '1767225601000-sell-35@86840.2', price: '86840.2', quantity: '35', positionSide: 'long', ts: 1767225601000 });
    expect(net).toMatchObject({ symbol: 'SOL-USDT-SWAP', positionSide: 'short', quantity: '7' });
    // 35 contracts of 0.01 BTC.
    expect(toLiquidationEvent('okx-swap', btcSwap, long!, 2)).toMatchObject({ quantity: 0.35, price: 86840.2, positionSide: 'long' });
    expect(okxSwap.liquidations?.sampled).toBe(true);
  });

  test('acks, errors, the 64008 notice (a reconnect request), pongs and unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'error', detail: "60018: Wrong URL or channel:books,instId:NOPE-USDT doesn't exist" },
      { kind: 'control', what: 'reconnect', detail: '64008: The connection will soon be closed for a service upgrade. Please reconnect.' },
      { kind: 'control', what: 'pong' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('instruments: live linear swaps with their contract value; inverse swaps and suspended ones left out', () => {
    expect(swapMarkets.markets.map((m) => [m.symbol, m.base, m.quote, m.contractSize, m.asset])).toEqual([
      ['BTC-USDT-SWAP', 'BTC', 'USDT', '0.01', 'bitcoin'],
      ['ETH-USDT-SWAP', 'ETH', 'USDT', '0.1', 'ethereum'],
    ]);
    expect(swapMarkets.unmapped).toEqual(['NEWCOIN-USDT-SWAP']);
    const spot = selectMarkets(okx, parseInstruments(fixture('okx', 'rest_instruments_spot.json'), 'SPOT'));
    expect(spot.markets.map((m) => m.symbol)).toEqual(['BTC-USDT', 'SOL-USDC']);
  });

  test('subscriptions: trades and books per instrument, liquidations once per instrument type', () => {
    const [plan] = okxSwap.sockets({ ws: 'wss://o', rest: 'https://o' }, [btcSwap]);
    expect(plan!.url).toBe('wss://o/ws/v5/public');
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([
      { op: 'subscribe', args: [{ channel: 'trades', instId: 'BTC-USDT-SWAP' }, { channel: 'books', instId: 'BTC-USDT-SWAP' }, { channel: 'liquidation-orders', instType: 'SWAP' }] },
    ]);
    expect(okx.book.resubscribe!(['BTC-USDT']).map((s) => JSON.parse(s).op)).toEqual(['unsubscribe', 'subscribe']);
  });
});

describe('okx book sync', () => {
  const [snapshot] = parseAll('ws_book_snapshot.json') as BookMessage[];
  const [update, gap] = parseAll('ws_book_update.json') as BookMessage[];
  const [badChecksum] = parseAll('ws_book_bad_checksum.json') as BookMessage[];

  test('snapshot and a chained update match the venue checksum; levels published in base units', () => {
    const sync = new BookSync(okxSwap.book, btcSwap);
    expect(sync.onMessage(update!)).toBe('ignored');
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.onMessage(update!)).toBe('applied');
    expect(sync.book.topRaw('bid', 5)).toEqual([['87000.1', '15'], ['86999.9', '30']]);
    // 15 contracts of 0.01 BTC.
    expect(toLevels(sync.book.topRaw('bid', 1), btcSwap)).toEqual([[87000.1, 0.15]]);
  });

  test('a broken seqId chain is a counted resync; the next snapshot brings the book back', () => {
    const sync = new BookSync(okxSwap.book, btcSwap);
    sync.onMessage(snapshot!);
    sync.onMessage(update!);
    expect(sync.onMessage(gap!)).toBe('gap');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
    expect(sync.onMessage(update!)).toBe('ignored');
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.synced).toBe(true);
  });

  test('since OKX deprecated the field (production, 23 June 2026) every checksum is 0: such frames keep the book on the seqId chain', () => {
    // The hand-written frames with the checksum the venue now sends; the chain still catches a gap.
    const zeroed = (name: string) => frames('okx', name).map((f) => {
      const frame = JSON.parse(f) as { data: { checksum: number }[] };
      for (const d of frame.data) d.checksum = 0;
      return JSON.stringify(frame);
    }).flatMap(okx.parse) as BookMessage[];
    const [snapshot0] = zeroed('ws_book_snapshot.json');
    const [update0, gap0] = zeroed('ws_book_update.json');
    const sync = new BookSync(okxSwap.book, btcSwap);
    expect(sync.onMessage(snapshot0!)).toBe('snapshot');
    expect(sync.onMessage(update0!)).toBe('applied');
    expect(sync.onMessage(gap0!)).toBe('gap');
    expect(sync.resyncs).toBe(1);
  });

  test('a book that no longer matches the venue checksum is a counted resync', () => {
    const sync = new BookSync(okxSwap.book, btcSwap);
    sync.onMessage(snapshot!);
    sync.onMessage(update!);
    expect(sync.onMessage(badChecksum!)).toBe('checksum');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
  });
});

/** A `books` frame as recorded in 2022, read without our parser. */
type RawBooks = { arg: { channel: string; instId: string }; action: 'snapshot' | 'update'; data: { asks: string[][]; bids: string[][]; ts: string; checksum: number; seqId?: number }[] };
type RawTrades = { arg: { channel: 'trades' }; data: { tradeId: string; px: string; sz: string; side: 'buy' | 'sell'; ts: string }[] };

describe('okx recorded session (cryptofeed, 2022-05-13, BTC-USDT trades and books of one connection)', () => {
  const session = recordedSession('okx');
  const raw = session.map((f) => ({ at: f.at, json: JSON.parse(f.text) as Record<string, unknown> }));
  const parsed = session.map((f) => okx.parse(f.text));
  const isBooks = (j: Record<string, unknown>): j is RawBooks => (j.arg as { channel?: string } | undefined)?.channel === 'books' && 'data' in j;
  const isTrades = (j: Record<string, unknown>): j is RawTrades => (j.arg as { channel?: string } | undefined)?.channel === 'trades' && 'data' in j;
  /** The book frames as BookMessages, built from the raw JSON alone. */
  const rawBookMessages = raw.flatMap(({ json }) =>
    isBooks(json) ? json.data.map((d): BookMessage => ({ kind: 'book', symbol: json.arg.instId, snapshot: json.action === 'snapshot', bids: d.bids.map(([p, q]) => [p!, q!]), asks: d.asks.map(([p, q]) => [p!, q!]), checksum: d.checksum })) : [],
  );

  test('185 frames: acks and trades parsed; the books frames, sent before OKX added seqId/prevSeqId (2023), are unknown to the parser', () => {
    const acks = raw.filter(({ json }) => json.event === 'subscribe').length;
    const trades = raw.reduce((n, { json }) => n + (isTrades(json) ? json.data.length : 0), 0);
    const books = raw.filter(({ json }) => isBooks(json));
    expect(session).toHaveLength(185);
    expect(books.every(({ json }) => isBooks(json) && json.data.every((d) => d.seqId === undefined))).toBe(true);
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': acks, trade: trades, unknown: books.length });
    parsed.forEach((messages, i) => {
      if (messages.some((m) => m.kind === 'unknown')) expect(isBooks(raw[i]!.json)).toBe(true);
    });
  });

  test("okxChecksum, through the book sync, accepts the venue's checksum on all 98 book frames (a snapshot, 97 updates); a corrupted level is caught", () => {
    // The venue's rule without the seqId chain these frames predate: the checksum alone.
    const sync = new BookSync({ checksum: okx.book.checksum }, btcSwap);
    expect(rawBookMessages).toHaveLength(98);
    expect(rawBookMessages.map((m) => sync.onMessage(m))).toEqual(rawBookMessages.map((m) => (m.snapshot ? 'snapshot' : 'applied')));
    expect(sync.resyncs).toBe(0);
    const corrupted = new BookSync({ checksum: okx.book.checksum }, btcSwap);
    const [snapshot, update] = rawBookMessages;
    corrupted.onMessage(snapshot!);
    const [price, size] = update!.asks[0]!;
    expect(corrupted.onMessage({ ...update!, asks: [[price, String(Number(size) + 0.001)], ...update!.asks.slice(1)] })).toBe('checksum');
  });

  test('taker side: every trade placed against the book of that moment is on the side the venue gives; trade ids unique; ts in ms of the venue clock', () => {
    const book = new OrderBook();
    let placed = 0;
    const seen = new Set<string>();
    raw.forEach(({ at, json }, i) => {
      if (isBooks(json)) {
        for (const d of json.data) {
          if (json.action === 'snapshot') book.clear();
          for (const [p, q] of d.bids) book.set('bid', [p!, q!]);
          for (const [p, q] of d.asks) book.set('ask', [p!, q!]);
        }
      }
      if (!isTrades(json)) return;
      const ours = tradesOf(parsed[i]!);
      json.data.forEach((t, k) => {
        const side = book.size('bid') ? placedSide(Number(t.px), book.top('bid', 1)[0]![0], book.top('ask', 1)[0]![0]) : undefined;
        if (side) placed += 1;
        expect(side === undefined || side === t.side).toBe(true);
        expect(ours[k]).toMatchObject({ tradeId: t.tradeId, price: t.px, quantity: t.sz, side: t.side, ts: Number(t.ts) });
        // Milliseconds of the venue clock: within two seconds before the recorder received it.
        expect(at * 1000 - Number(t.ts)).toBeGreaterThan(-50);
        expect(at * 1000 - Number(t.ts)).toBeLessThan(2_000);
        expect(seen.has(t.tradeId)).toBe(false);
        seen.add(t.tradeId);
      });
    });
    expect(placed).toBeGreaterThan(50);
  });
});

describe('okx recorded frames (Tardis.dev samples): spot and swap trades, a liquidation-orders push', () => {
  const recorded = fixture('okx', 'ws_recorded_tardis.json') as { arg: { channel: string; instId?: string }; data?: { instId: string; sz?: string; details?: { side: string; posSide: string; sz: string; bkPx: string; ts: string }[] }[] }[];
  const parsed = frames('okx', 'ws_recorded_tardis.json').map(okx.parse);

  test('every frame parses; swap sizes are whole contracts, converted with ctVal; the liquidation side is posSide', () => {
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': 1, trade: 2, liquidation: 1 });
    const swapTrade = tradesOf(parsed[2]!)[0]!;
    expect(swapTrade).toMatchObject({ symbol: 'BTC-USDT-SWAP', quantity: recorded[2]!.data![0]!.sz });
    expect(Number.isInteger(Number(swapTrade.quantity))).toBe(true);
    // 5 contracts of 0.01 BTC.
    expect(toTradeEvent('okx-swap', btcSwap, swapTrade, 1)?.quantity).toBe(Number(swapTrade.quantity) * Number(btcSwap.contractSize));
    const detail = recorded[3]!.data![0]!.details![0]!;
    expect(parsed[3]).toEqual([{ kind: 'liquidation', symbol: 'XRP-USD-230929', liquidationId: `${detail.ts}-${detail.side}-${detail.sz}@${detail.bkPx}`, price: detail.bkPx, quantity: detail.sz, positionSide: detail.posSide, ts: Number(detail.ts) }]);
  });
});

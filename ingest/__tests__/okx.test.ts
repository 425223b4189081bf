import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { OrderBook } from '../orderBook.ts';
import { selectMarkets, toLevels, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { okx, okxSwap, parseInstruments } from '../venues/okx.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, placedSide, recordedSession, tradesOf } from './recorded.ts';

// Every parse runs inside a test: mutation testing activates a mutant only while tests run, so a
// frame parsed while the suite is collected would be parsed by the unmutated code.
const parseAll = (name: string) => frames('okx', name).flatMap(okx.parse);
const listedSwaps = () => selectMarkets(okxSwap, parseInstruments(fixture('okx', 'rest_instruments_swap.json'), 'SWAP'));
/** BTC-USDT-SWAP as rest_instruments_swap.json lists it: contracts of 0.01 BTC. */
const btcSwap: VenueMarket = { symbol: 'BTC-USDT-SWAP', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '0.01' };

describe('okx messages', () => {
  test('trades: taker side as sent; swap sizes are contracts, converted with ctVal to base units', () => {
    const [first, second, swap] = parseAll('ws_trade.json') as Extract<VenueMessage, { kind: 'trade' }>[];
    expect(first).toEqual({ kind: 'trade', symbol: 'BTC-USDT', tradeId: '730915421', seq: 730915421, fills: 1, price: '87012.4', quantity: '0.01520000', side: 'sell', ts: 1767225600121 });
    // A push that aggregates three fills: its number is the last fill's, 730915422 to 730915424 after 730915421.
    expect(second).toMatchObject({ tradeId: '730915424', seq: 730915424, fills: 3, side: 'buy', quantity: '0.2' });
    const spot: VenueMarket = { symbol: 'BTC-USDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
    expect(toTradeEvent('okx', spot, first!, 1)).toMatchObject({ quantity: 0.0152, price: 87012.4 });
    // 12 contracts of 0.1 ETH: 1.2 ETH, exactly (not 1.2000000000000002).
    const ethSwap = listedSwaps().markets.find((m) => m.symbol === 'ETH-USDT-SWAP')!;
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

  test('liquidations: posSide long or short is taken as sent; in net mode a forced sell closes a long', () => {
    // Hand-written in the format of the "Liquidation orders channel" (OKX v5 docs). In every frame seen
    // posSide and the order side agree; the first two details pull them apart to show posSide is the one read.
    const frame = (details: object[]) => JSON.stringify({ arg: { channel: 'liquidation-orders', instType: 'SWAP' }, data: [{ instId: 'BTC-USDT-SWAP', instType: 'SWAP', details }] });
    const detail = (posSide: string, side: string) => ({ bkLoss: '0', bkPx: '86840.2', ccy: '', posSide, side, sz: '3', ts: '1767225602000' });
    const sides = okx.parse(frame([detail('long', 'buy'), detail('short', 'sell'), detail('net', 'sell')])).map((m) => (m.kind === 'liquidation' ? m.positionSide : m.kind));
    expect(sides).toEqual(['long', 'short', 'long']);
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

  test('unsubscribe acks, notices other than 64008 and other events are statuses; malformed frames are unknown', () => {
    // Hand-written in the formats of the OKX v5 docs: "Unsubscribe", "Notification" (notice events; only
    // 64008 is documented, 64009 stands for any other), "Connection count limit" (channel-conn-count).
    // Then malformed: an error whose code is a number, a reply with neither event nor arg, a books
    // frame without seqId, a liquidation whose bkPx is a number, JSON null.
    const parsed = [
      { event: 'unsubscribe', arg: { channel: 'books', instId: 'BTC-USDT' }, connId: 'a4d3ae55' },
      { event: 'notice', code: '64009', msg: 'Another notice.', connId: 'a4d3ae55' },
      { event: 'channel-conn-count', channel: 'books', connCount: '2', connId: 'a4d3ae55' },
      { event: 'error', code: 60018, msg: 'Wrong URL or channel', connId: 'a4d3ae55' },
      { code: '0', msg: '', data: [] },
      { arg: { channel: 'books', instId: 'BTC-USDT-SWAP' }, action: 'update', data: [{ asks: [], bids: [], ts: '1767225600300', checksum: 0 }] },
      { arg: { channel: 'liquidation-orders', instType: 'SWAP' }, data: [{ instId: 'BTC-USDT-SWAP', details: [{ posSide: 'long', side: 'sell', bkPx: 86840.2, sz: '3', ts: '1767225602000' }] }] },
      null,
    ].map((frame) => okx.parse(JSON.stringify(frame)));
    expect(parsed).toEqual([
      [{ kind: 'control', what: 'ack' }],
      [{ kind: 'control', what: 'status', detail: '64009: Another notice.' }],
      [{ kind: 'control', what: 'status', detail: 'channel-conn-count' }],
      [{ kind: 'unknown' }],
      [{ kind: 'unknown' }],
      [{ kind: 'unknown' }],
      [{ kind: 'unknown' }],
      [{ kind: 'unknown' }],
    ]);
  });

});

describe('okx instruments and subscriptions', () => {
  test('instruments: live linear swaps with their contract value; inverse swaps and suspended ones left out', () => {
    const swapMarkets = listedSwaps();
    expect(swapMarkets.markets.map((m) => [m.symbol, m.base, m.quote, m.contractSize, m.asset])).toEqual([
      ['BTC-USDT-SWAP', 'BTC', 'USDT', '0.01', 'bitcoin'],
      ['ETH-USDT-SWAP', 'ETH', 'USDT', '0.1', 'ethereum'],
    ]);
    expect(swapMarkets.unmapped).toEqual(['NEWCOIN-USDT-SWAP']);
    const spot = selectMarkets(okx, parseInstruments(fixture('okx', 'rest_instruments_spot.json'), 'SPOT'));
    expect(spot.markets.map((m) => m.symbol)).toEqual(['BTC-USDT', 'SOL-USDC']);
  });

  test('instruments: one contract is ctVal x ctMult; ctVal as sent when ctMult is 1 or empty; a swap without uly is left out', () => {
    // Hand-written ("Get instruments", OKX v5 docs): every recorded swap has ctMult "1", and OKX writes
    // "" for a field that does not apply. A ctVal of 0.0000001 stays as sent: through a double it would
    // print "1e-7", which decimalProduct refuses. uly is optional in our schema: without it, no quote.
    const swap = (instId: string, fields: object) => ({ instType: 'SWAP', instId, uly: instId.replace('-SWAP', ''), settleCcy: 'USDT', ctType: 'linear', ctValCcy: instId.split('-')[0], state: 'live', ...fields });
    const json = {
      code: '0',
      msg: '',
      data: [
        swap('TINY-USDT-SWAP', { ctVal: '0.0000001', ctMult: '1' }),
        swap('BTC-USDT-SWAP', { ctVal: '0.01', ctMult: '10' }),
        swap('SOL-USDT-SWAP', { ctVal: '1', ctMult: '' }),
        swap('ETH-USDT-SWAP', { ctVal: '0.1', ctMult: '1', uly: undefined }),
      ],
    };
    expect(parseInstruments(json, 'SWAP')).toEqual([
      { symbol: 'TINY-USDT-SWAP', base: 'TINY', quote: 'USDT', contractSize: '0.0000001' },
      { symbol: 'BTC-USDT-SWAP', base: 'BTC', quote: 'USDT', contractSize: '0.1' },
      { symbol: 'SOL-USDT-SWAP', base: 'SOL', quote: 'USDT', contractSize: '1' },
    ]);
  });

  test('listMarkets asks the instruments of its type and lists every live one (spot: in base units; swap: one contract in base units)', async () => {
    const spotJson = fixture('okx', 'rest_instruments_spot.json');
    const swapJson = fixture('okx', 'rest_instruments_swap.json');
    const spot = cannedIo({ 'https://o/api/v5/public/instruments?instType=SPOT': spotJson });
    expect(await okx.listMarkets(spot.io, { ws: 'wss://o', rest: 'https://o' })).toEqual([
      { symbol: 'BTC-USDT', base: 'BTC', quote: 'USDT', contractSize: '1' },
      { symbol: 'ETH-BTC', base: 'ETH', quote: 'BTC', contractSize: '1' },
      { symbol: 'SOL-USDC', base: 'SOL', quote: 'USDC', contractSize: '1' },
    ]);
    const swap = cannedIo({ 'https://o/api/v5/public/instruments?instType=SWAP': swapJson });
    expect(await okxSwap.listMarkets(swap.io, { ws: 'wss://o', rest: 'https://o' })).toEqual([
      { symbol: 'BTC-USDT-SWAP', base: 'BTC', quote: 'USDT', contractSize: '0.01' },
      { symbol: 'ETH-USDT-SWAP', base: 'ETH', quote: 'USDT', contractSize: '0.1' },
      { symbol: 'NEWCOIN-USDT-SWAP', base: 'NEWCOIN', quote: 'USDT', contractSize: '10' },
    ]);
    expect([...spot.asked, ...swap.asked]).toEqual(['https://o/api/v5/public/instruments?instType=SPOT', 'https://o/api/v5/public/instruments?instType=SWAP']);
    // Hand-written ("Get instruments", OKX v5 docs): a spot listing that names only one of its currencies is left out.
    const halfNamed = { code: '0', msg: '', data: [{ instType: 'SPOT', instId: 'XYZ-USDT', baseCcy: '', quoteCcy: 'USDT', state: 'live' }, { instType: 'SPOT', instId: 'BTC-XYZ', baseCcy: 'BTC', quoteCcy: '', state: 'live' }] };
    expect(parseInstruments(halfNamed, 'SPOT')).toEqual([]);
  });

  test('subscriptions: trades and books per instrument, liquidations once per instrument type', () => {
    const [plan] = okxSwap.sockets({ ws: 'wss://o', rest: 'https://o' }, [btcSwap]);
    expect(plan!.url).toBe('wss://o/ws/v5/public');
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([
      { op: 'subscribe', args: [{ channel: 'trades', instId: 'BTC-USDT-SWAP' }, { channel: 'books', instId: 'BTC-USDT-SWAP' }, { channel: 'liquidation-orders', instType: 'SWAP' }] },
    ]);
    const books = [{ channel: 'books', instId: 'BTC-USDT' }, { channel: 'books', instId: 'ETH-USDT' }];
    expect(okx.book.resubscribe!(['BTC-USDT', 'ETH-USDT']).map((s) => JSON.parse(s))).toEqual([
      { op: 'unsubscribe', args: books },
      { op: 'subscribe', args: books },
    ]);
  });

  test('subscriptions: spot asks no liquidations; 150 markets per socket, 100 arguments per request, liquidations on the first socket only', () => {
    const [spotPlan] = okx.sockets({ ws: 'wss://o', rest: 'https://o' }, [{ symbol: 'BTC-USDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' }]);
    expect(spotPlan!.subscribe.map((s) => JSON.parse(s))).toEqual([{ op: 'subscribe', args: [{ channel: 'trades', instId: 'BTC-USDT' }, { channel: 'books', instId: 'BTC-USDT' }] }]);
    const markets = Array.from({ length: 151 }, (_, i): VenueMarket => ({ symbol: `C${i}-USDT-SWAP`, base: `C${i}`, quote: 'USDT', asset: `c${i}`, contractSize: '1' }));
    const [first, second, ...more] = okxSwap.sockets({ ws: 'wss://o', rest: 'https://o' }, markets);
    expect(more).toEqual([]);
    expect(first!.symbols).toEqual(markets.slice(0, 150).map((m) => m.symbol));
    expect(second!.symbols).toEqual(['C150-USDT-SWAP']);
    // 150 markets x (trades, books) + the liquidations: 301 arguments in 4 requests.
    const firstArgs = first!.subscribe.map((s) => JSON.parse(s).args as object[]);
    expect(firstArgs.map((a) => a.length)).toEqual([100, 100, 100, 1]);
    expect(firstArgs[3]).toEqual([{ channel: 'liquidation-orders', instType: 'SWAP' }]);
    expect(second!.subscribe.map((s) => JSON.parse(s))).toEqual([{ op: 'subscribe', args: [{ channel: 'trades', instId: 'C150-USDT-SWAP' }, { channel: 'books', instId: 'C150-USDT-SWAP' }] }]);
  });
});

describe('okx book frames and the seqId chain', () => {
  test('a books frame: levels as price and size strings (order counts dropped), seqId and prevSeqId, the checksum', () => {
    expect(parseAll('ws_book_snapshot.json')).toEqual([
      {
        kind: 'book',
        symbol: 'BTC-USDT-SWAP',
        snapshot: true,
        bids: [['87000.1', '12'], ['86999.9', '30'], ['86999.5', '4']],
        asks: [['87000.2', '8'], ['87000.5', '25']],
        ts: 1767225600100,
        lastId: 50010,
        prevId: -1,
        checksum: 1183233051,
      },
    ]);
  });

  test('an update continuing the chain applies; one already applied (replayed or older) is stale; one from further on is a gap', () => {
    const [update, gap] = parseAll('ws_book_update.json') as BookMessage[];
    const sequence = okx.book.sequence!;
    // update: prevSeqId 50010, seqId 50014; gap: prevSeqId 50017, seqId 50019.
    expect(sequence(50010, update!, true)).toBe('apply');
    expect(sequence(50014, update!, false)).toBe('stale');
    expect(sequence(50019, update!, false)).toBe('stale');
    expect(sequence(50014, gap!, false)).toBe('gap');
  });
});

describe('okx book sync', () => {
  const bookFrames = () => {
    const [snapshot] = parseAll('ws_book_snapshot.json') as BookMessage[];
    const [update, gap] = parseAll('ws_book_update.json') as BookMessage[];
    const [badChecksum] = parseAll('ws_book_bad_checksum.json') as BookMessage[];
    return { snapshot, update, gap, badChecksum };
  };

  test('snapshot and a chained update match the venue checksum; levels published in base units', () => {
    const { snapshot, update } = bookFrames();
    const sync = new BookSync(okxSwap.book, btcSwap);
    expect(sync.onMessage(update!)).toBe('ignored');
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.onMessage(update!)).toBe('applied');
    expect(sync.book.topRaw('bid', 5)).toEqual([['87000.1', '15'], ['86999.9', '30']]);
    // 15 contracts of 0.01 BTC.
    expect(toLevels(sync.book.topRaw('bid', 1), btcSwap)).toEqual([[87000.1, 0.15]]);
  });

  test('a broken seqId chain is a counted resync; the next snapshot brings the book back', () => {
    const { snapshot, update, gap } = bookFrames();
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
    const { snapshot, update, badChecksum } = bookFrames();
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
  // Parsed inside each test, not while the suite is collected: a mutation tool only sees what tests run.
  const parseSession = () => session.map((f) => okx.parse(f.text));
  const isBooks = (j: Record<string, unknown>): j is RawBooks => (j.arg as { channel?: string } | undefined)?.channel === 'books' && 'data' in j;
  const isTrades = (j: Record<string, unknown>): j is RawTrades => (j.arg as { channel?: string } | undefined)?.channel === 'trades' && 'data' in j;
  /** The book frames as BookMessages, built from the raw JSON alone. */
  const rawBookMessages = raw.flatMap(({ json }) =>
    isBooks(json) ? json.data.map((d): BookMessage => ({ kind: 'book', symbol: json.arg.instId, snapshot: json.action === 'snapshot', bids: d.bids.map(([p, q]) => [p!, q!]), asks: d.asks.map(([p, q]) => [p!, q!]), checksum: d.checksum })) : [],
  );

  test('185 frames: acks and trades parsed; the books frames, sent before OKX added seqId/prevSeqId (2023), are unknown to the parser', () => {
    const parsed = parseSession();
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
    const parsed = parseSession();
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

  test('every frame parses; swap sizes are whole contracts, converted with ctVal; the liquidation side is posSide', () => {
    const parsed = frames('okx', 'ws_recorded_tardis.json').map(okx.parse);
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

describe('okx trade history (history-trades: one row per fill, newest first)', () => {
  const rest = okx.history!.rest!;
  const spot: VenueMarket = { symbol: 'BTC-USDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };

  test('fills are numbered consecutively per instrument: the recorded trades run without a hole', () => {
    expect([okx.history, okxSwap.history].map((h) => h?.continuity)).toEqual(['sequential', 'sequential']);
    const seqs = tradesOf(recordedSession('okx').flatMap((f) => okx.parse(f.text))).map((t) => t.seq!);
    expect(seqs.length).toBe(69);
    expect(seqs).toEqual(Array.from({ length: 69 }, (_, i) => 338476307 + i));
  });

  test('url: the page right after the cursor, newer than it and older than it + 101 (tradeId paging); without a number, the latest page', () => {
    expect(rest.url('https://x', 'BTC-USDT', { ts: 1, seq: 730915421 })).toBe('https://x/api/v5/market/history-trades?instId=BTC-USDT&type=1&limit=100&before=730915421&after=730915522');
    expect(rest.url('https://x', 'BTC-USDT-SWAP', { ts: 1 })).toBe('https://x/api/v5/market/history-trades?instId=BTC-USDT-SWAP&type=1&limit=100');
  });

  test('parse: the documented page, newest first, each fill its own number; an empty page is the last; the refusal (50011) is no page', () => {
    expect(rest.parse(fixture('okx', 'rest_history_trades.json'), 'BTC-USDT')).toEqual({
      trades: [
        { kind: 'trade', symbol: 'BTC-USDT', tradeId: '242720720', seq: 242720720, price: '29963.2', quantity: '0.00001', side: 'sell', ts: 1654161646974 },
        { kind: 'trade', symbol: 'BTC-USDT', tradeId: '242720719', seq: 242720719, price: '29964.1', quantity: '0.00001', side: 'sell', ts: 1654161641568 },
      ],
      more: true,
    });
    expect(rest.parse({ code: '0', msg: '', data: [] }, 'BTC-USDT')).toEqual({ trades: [], more: false });
    expect(rest.parse(fixture('okx', 'rest_rate_limited.json'), 'BTC-USDT')).toBeUndefined();
    // Three months of reach; under both published rates (10 and 20 requests per 2 s).
    expect(rest.reachMs).toBe(90 * 86_400_000);
    expect(rest.requestsPerSecond).toBeLessThan(5);
    expect(okxSwap.history).toBe(okx.history);
  });

  test('a fill from a page is the event of its one-fill push', () => {
    const row = { instId: 'BTC-USDT', side: 'sell', sz: '0.01520000', px: '87012.4', tradeId: '730915421', ts: '1767225600121' };
    const [fromRest] = rest.parse({ code: '0', msg: '', data: [row] }, 'BTC-USDT')!.trades;
    const [fromSocket] = tradesOf(parseAll('ws_trade.json'));
    // The push says it is one fill (count 1); the row, being one, says nothing.
    expect({ ...fromRest, fills: 1 }).toEqual(fromSocket);
    expect(toTradeEvent('okx', spot, fromRest!, 4)).toEqual(toTradeEvent('okx', spot, fromSocket!, 4));
  });
});

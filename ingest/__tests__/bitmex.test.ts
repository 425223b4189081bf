import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLevels, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { bitmex, bitmexSession, parseInstruments, parseTradeHistory, tradePageSize } from '../venues/bitmex.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, tradesOf } from './recorded.ts';

const parseAll = (name: string) => frames('bitmex', name).flatMap(bitmex.parse);
const xbtusd: VenueMarket = { symbol: 'XBTUSD', base: 'XBT', quote: 'USD', asset: 'bitcoin', contractSize: '1', inverse: true };

describe('bitmex messages', () => {
  test('trades: the partial of recent trades skipped; taker side; sizes in USD contracts converted per trade by its price', () => {
    const parsed = parseAll('ws_trade.json');
    expect(parsed).toEqual([
      { kind: 'control', what: 'status', detail: 'recent trades' },
      { kind: 'trade', symbol: 'XBTUSD', tradeId: '0f2e7c1a-5b4d-4e3f-9a8b-7c6d5e4f3a2b', price: '97010.5', quantity: '1200', side: 'sell', ts: Date.UTC(2026, 0, 2, 3, 4, 5, 678) },
      { kind: 'trade', symbol: 'XBTUSD', tradeId: '1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d', price: '97011', quantity: '100', side: 'buy', ts: Date.UTC(2026, 0, 2, 3, 4, 5, 679) },
    ]);
    const event = toTradeEvent('bitmex', xbtusd, parsed[1] as Extract<VenueMessage, { kind: 'trade' }>, 9);
    // 1200 contracts of 1 USD at 97010.5 USD per BTC (IEEE division of exact doubles is correctly rounded).
    expect(event).toMatchObject({ asset: 'bitcoin', price: 97010.5, quantity: 1200 / 97010.5 });
    // The fixture's homeNotional (BTC value of the trade), to its 8 decimals.
    expect(event!.quantity.toFixed(8)).toBe('0.01236980');
  });

  test('liquidations: only the insert is a liquidation (a Sell closed a long); no venue time, so the receive time', () => {
    const parsed = parseAll('ws_liquidation.json');
    expect(parsed).toEqual([
      { kind: 'liquidation', symbol: 'XBTUSD', liquidationId: '6f1e2d3c-4b5a-4987-8c6d-5e4f3a2b1c0d', price: '96850.5', quantity: '2500', positionSide: 'long' },
      { kind: 'control', what: 'status', detail: 'liquidation update' },
      { kind: 'control', what: 'status', detail: 'liquidation delete' },
    ]);
    expect(toLiquidationEvent('bitmex', xbtusd, parsed[0] as Extract<VenueMessage, { kind: 'liquidation' }>, 1_767_323_045_000)).toMatchObject({
      quantity: 2500 / 96850.5,
      positionSide: 'long',
      ts: 1_767_323_045_000,
      receivedAt: 1_767_323_045_000,
    });
  });

  test('welcome, subscription replies, pong, refusals; unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack', detail: 'welcome' },
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'pong' },
      { kind: 'control', what: 'error', detail: '400: Unknown or expired table: orderBookL2:NOPE' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('a connection session reads control frames as the stateless parse does', () => {
    const session = bitmexSession();
    expect(frames('bitmex', 'ws_control.json').flatMap((f) => session.parse(f))).toEqual(parseAll('ws_control.json'));
  });

  test('recorded (Tardis.dev): a trade, then a Buy liquidation order (a short closed) and its deletion', () => {
    expect(parseAll('ws_recorded_tardis.json')).toEqual([
      { kind: 'trade', symbol: 'XBTUSD', tradeId: 'f73b6f28-075a-3548-a81c-8c843afd2746', price: '8544.5', quantity: '1000', side: 'sell', ts: Date.UTC(2019, 5, 1, 0, 0, 19, 163) },
      { kind: 'liquidation', symbol: 'XBTUSD', liquidationId: 'dd9cea25-207c-0dab-15b5-b88da776f500', price: '10106', quantity: '9214', positionSide: 'short' },
      { kind: 'control', what: 'status', detail: 'liquidation delete' },
    ]);
  });

  test('unknown, never thrown: a trade changed after its insert, a liquidation insert without its price, the JSON null; an error without status', () => {
    // Hand-written in the envelope of the wsAPI docs: trades only ever arrive as partial and insert.
    const trade = { timestamp: '2026-01-02T03:04:05.678Z', symbol: 'XBTUSD', side: 'Sell', size: 1200, price: 97010.5, trdMatchID: '0f2e7c1a-5b4d-4e3f-9a8b-7c6d5e4f3a2b' };
    expect(bitmex.parse(JSON.stringify({ table: 'trade', action: 'update', data: [trade] }))).toEqual([{ kind: 'unknown' }]);
    const liquidation = { orderID: '6f1e2d3c-4b5a-4987-8c6d-5e4f3a2b1c0d', symbol: 'XBTUSD', side: 'Sell', leavesQty: 2500 };
    expect(bitmex.parse(JSON.stringify({ table: 'liquidation', action: 'insert', data: [liquidation] }))).toEqual([{ kind: 'unknown' }]);
    expect(bitmex.parse('null')).toEqual([{ kind: 'unknown' }]);
    // The refusal of ws_control.json without its optional `status`.
    expect(bitmex.parse(JSON.stringify({ error: 'Unknown or expired table: orderBookL2:NOPE' }))).toEqual([{ kind: 'control', what: 'error', detail: ': Unknown or expired table: orderBookL2:NOPE' }]);
  });

  test('instruments: open inverse perpetuals only, contract value from the multipliers', () => {
    const listings = parseInstruments(fixture('bitmex', 'rest_instrument_active.json'));
    expect(listings).toEqual([{ symbol: 'XBTUSD', base: 'XBT', quote: 'USD', contractSize: '1', inverse: true }]);
    expect(selectMarkets(bitmex, listings).markets.map((m) => m.asset)).toEqual(['bitcoin']);
  });

  test('instruments: not open, or a contract value that is no positive whole number of quote units, is left out', () => {
    const [xbtusdRow] = fixture('bitmex', 'rest_instrument_active.json') as Record<string, unknown>[];
    const contractSizes = (changes: Record<string, unknown>) => parseInstruments([{ ...xbtusdRow, ...changes }]).map((l) => l.contractSize);
    expect(contractSizes({})).toEqual(['1']);
    expect(contractSizes({ state: 'Unlisted' })).toEqual([]);
    // 100000000 / 300000000: a third of a USD per contract.
    expect(contractSizes({ underlyingToSettleMultiplier: 300_000_000 })).toEqual([]);
    // A sign the venue does not use: -1 USD per contract.
    expect(contractSizes({ underlyingToSettleMultiplier: -100_000_000 })).toEqual([]);
  });

  test('market listing: GET /api/v1/instrument/active on the REST endpoint', async () => {
    const { io, asked } = cannedIo({ 'https://b/api/v1/instrument/active': fixture('bitmex', 'rest_instrument_active.json') });
    expect(await bitmex.listMarkets(io, { ws: 'wss://b', rest: 'https://b' })).toEqual([{ symbol: 'XBTUSD', base: 'XBT', quote: 'USD', contractSize: '1', inverse: true }]);
    expect(asked).toEqual(['https://b/api/v1/instrument/active']);
  });

  test('subscriptions: trade, orderBookL2 and liquidation per market, on one socket', () => {
    const [plan, ...rest] = bitmex.sockets({ ws: 'wss://b', rest: 'https://b' }, [xbtusd]);
    expect(rest).toEqual([]);
    expect(plan!.url).toBe('wss://b/realtime');
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([{ op: 'subscribe', args: ['trade:XBTUSD', 'orderBookL2:XBTUSD', 'liquidation:XBTUSD'] }]);
    expect(bitmex.sockets({ ws: 'wss://b', rest: 'https://b' }, [])).toEqual([]);
  });
});

describe('bitmex book (orderBookL2 rows by id, no sequence numbers)', () => {
  const book = frames('bitmex', 'ws_book.json');

  test('partial, insert, update and delete by id; levels in base units at each level price', () => {
    const session = bitmexSession();
    const sync = new BookSync(bitmex.book, xbtusd);
    const outcomes = book.slice(0, 4).flatMap((f) => session.parse(f) as BookMessage[]).map((m) => sync.onMessage(m));
    expect(outcomes).toEqual(['snapshot', 'applied', 'applied', 'applied']);
    expect(sync.book.topRaw('bid', 5)).toEqual([['97000', '2500'], ['96990', '800']]);
    expect(sync.book.topRaw('ask', 5)).toEqual([['97005', '400'], ['97010', '1200']]);
    expect(toLevels(sync.book.topRaw('ask', 5), xbtusd)).toEqual([[97005, 400 / 97005], [97010, 1200 / 97010]]);
  });

  test('an update of a row never inserted (a lost message) is a counted resync, answered by a new subscription', () => {
    const session = bitmexSession();
    const sync = new BookSync(bitmex.book, xbtusd);
    for (const f of book.slice(0, 4)) for (const m of session.parse(f)) sync.onMessage(m as BookMessage);
    const [lost] = session.parse(book[4]!) as BookMessage[];
    expect(sync.onMessage(lost!)).toBe('gap');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
    expect(bitmex.book.resubscribe!(['XBTUSD']).map((s) => JSON.parse(s))).toEqual([
      { op: 'unsubscribe', args: ['orderBookL2:XBTUSD'] },
      { op: 'subscribe', args: ['orderBookL2:XBTUSD'] },
    ]);
    // The new subscription's partial starts the book again.
    const [partial] = session.parse(book[0]!) as BookMessage[];
    expect(sync.onMessage(partial!)).toBe('snapshot');
    expect(sync.book.topRaw('bid', 1)).toEqual([['97000', '3000']]);
  });

  test('book frames need the session: the stateless parse does not guess', () => {
    expect(bitmex.parse(book[1]!)).toEqual([{ kind: 'unknown' }]);
  });

  /** An orderBookL2 frame, hand-written in the envelope of the wsAPI docs (rows as in ws_book.json). */
  const l2 = (action: string, data: object[], extra: object = {}) => JSON.stringify({ table: 'orderBookL2', action, ...extra, data });
  const partial = JSON.parse(book[0]!) as { filter: object; data: object[] };

  test('each frame as read: rows by side, a deletion as size 0 at the price its id was given, one number per frame', () => {
    const session = bitmexSession();
    expect(book.flatMap((f) => session.parse(f))).toEqual([
      { kind: 'book', symbol: 'XBTUSD', snapshot: true, bids: [['97000', '3000'], ['96990', '800']], asks: [['97020', '5000'], ['97010', '1200']], firstId: 1, lastId: 1 },
      { kind: 'book', symbol: 'XBTUSD', snapshot: false, bids: [], asks: [['97005', '400']], firstId: 2, lastId: 2 },
      { kind: 'book', symbol: 'XBTUSD', snapshot: false, bids: [['97000', '2500']], asks: [], firstId: 3, lastId: 3 },
      { kind: 'book', symbol: 'XBTUSD', snapshot: false, bids: [], asks: [['97020', '0']], firstId: 4, lastId: 4 },
      // The update of an id never inserted: its row is dropped and number 5 skipped.
      { kind: 'book', symbol: 'XBTUSD', snapshot: false, bids: [], asks: [], firstId: 6, lastId: 6 },
    ]);
  });

  test('a row that contradicts the book skips a number: an insert of a held id, an insert without price or size, an update without size', () => {
    const afterPartial = (frame: string) => {
      const session = bitmexSession();
      const sync = new BookSync(bitmex.book, xbtusd);
      expect(sync.onMessage(session.parse(book[0]!)[0] as BookMessage)).toBe('snapshot');
      return (session.parse(frame) as BookMessage[]).map((m) => sync.onMessage(m));
    };
    expect(afterPartial(l2('insert', [{ symbol: 'XBTUSD', id: 8790300000, side: 'Buy', size: 100, price: 97000 }]))).toEqual(['gap']);
    expect(afterPartial(l2('insert', [{ symbol: 'XBTUSD', id: 8790302000, side: 'Buy', size: 100 }]))).toEqual(['gap']);
    expect(afterPartial(l2('insert', [{ symbol: 'XBTUSD', id: 8790302000, side: 'Buy', price: 96980 }]))).toEqual(['gap']);
    expect(afterPartial(l2('update', [{ symbol: 'XBTUSD', id: 8790300000, side: 'Buy' }]))).toEqual(['gap']);
    // The same rows, well formed, continue the book.
    expect(afterPartial(l2('insert', [{ symbol: 'XBTUSD', id: 8790302000, side: 'Buy', size: 100, price: 96980 }]))).toEqual(['applied']);
  });

  test('ids come and go: a deleted row may be inserted again, an updated row updated again', () => {
    const session = bitmexSession();
    const sync = new BookSync(bitmex.book, xbtusd);
    const changes = [
      book[0]!,
      book[3]!, // delete of the Sell row 8790298000 at 97020
      l2('insert', [{ symbol: 'XBTUSD', id: 8790298000, side: 'Sell', size: 700, price: 97020 }]),
      book[2]!, // update of the Buy row 8790300000 to 2500
      l2('update', [{ symbol: 'XBTUSD', id: 8790300000, side: 'Buy', size: 2000 }]),
    ];
    expect(changes.flatMap((f) => session.parse(f) as BookMessage[]).map((m) => sync.onMessage(m))).toEqual(['snapshot', 'applied', 'applied', 'applied', 'applied']);
    expect(sync.book.topRaw('bid', 5)).toEqual([['97000', '2000'], ['96990', '800']]);
    expect(sync.book.topRaw('ask', 5)).toEqual([['97010', '1200'], ['97020', '700']]);
  });

  test('a partial resets the book even when empty, names the symbols of its rows when it has no filter, and never skips a number', () => {
    // An instrument with an empty book: the partial has no rows, only its filter names the market.
    expect(bitmexSession().parse(l2('partial', [], { filter: { symbol: 'XBTUSD' } }))).toEqual([
      { kind: 'book', symbol: 'XBTUSD', snapshot: true, bids: [], asks: [], firstId: 1, lastId: 1 },
    ]);
    expect(bitmexSession().parse(l2('partial', partial.data))).toMatchObject([{ symbol: 'XBTUSD', snapshot: true, firstId: 1, lastId: 1 }]);
    // A row twice contradicts the partial, yet the partial is the start of the book.
    expect(bitmexSession().parse(l2('partial', [partial.data[0]!, partial.data[0]!], { filter: partial.filter }))).toMatchObject([{ snapshot: true, firstId: 1, lastId: 1 }]);
    // A change naming a market but carrying no rows changes nothing.
    const session = bitmexSession();
    session.parse(book[0]!);
    expect(session.parse(l2('insert', [], { filter: { symbol: 'XBTUSD' } }))).toEqual([]);
  });

  test('rows before any partial are dropped, their number skipped; rows that do not parse are unknown', () => {
    expect(bitmexSession().parse(book[1]!)).toEqual([{ kind: 'book', symbol: 'XBTUSD', snapshot: false, bids: [], asks: [], firstId: 2, lastId: 2 }]);
    expect(bitmexSession().parse(l2('insert', [{ symbol: 'XBTUSD', side: 'Sell', size: 400, price: 97005 }]))).toEqual([{ kind: 'unknown' }]);
  });

  test('the numbering rule: a number at or below the last applied is stale, the next one applies, any other is a gap', () => {
    const numbered = (id: number): BookMessage => ({ kind: 'book', symbol: 'XBTUSD', snapshot: false, bids: [], asks: [], firstId: id, lastId: id });
    expect([4, 5, 6, 7].map((id) => bitmex.book.sequence!(5, numbered(id), false))).toEqual(['stale', 'stale', 'apply', 'gap']);
  });
});

describe('bitmex recorded session (cryptofeed, 2021-07-22, BCHUSD orderBookL2 and XBTUSD, BCHUSD trades of one connection)', () => {
  const session = recordedSession('bitmex');
  // Parsed inside each test, not when the suite is collected: mutation testing attributes coverage per test.
  const parseRecorded = () => {
    const connection = bitmex.session!();
    return session.map((f) => connection.parse(f.text));
  };
  const raw = session.map((f) => (f.text === 'pong' ? undefined : (JSON.parse(f.text) as { table?: string; action?: string; data?: { trdMatchID?: string; size?: number; price?: number; homeNotional?: number; timestamp?: string }[] })));

  test('every frame parses; the book never contradicts itself (no skipped number); trade ids unique', () => {
    const parsed = parseRecorded();
    const bookFrames = raw.filter((j) => j?.table === 'orderBookL2').length;
    const inserts = raw.filter((j) => j?.table === 'trade' && j.action === 'insert').flatMap((j) => j!.data!);
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': raw.filter((j) => j && !j.table).length, 'control:status': 2, book: bookFrames, trade: inserts.length });
    const sync = new BookSync(bitmex.book, { symbol: 'BCHUSD', base: 'BCH', quote: 'USD', asset: 'bitcoin-cash', contractSize: '1' });
    const outcomes = parsed.flat().filter((m): m is BookMessage => m.kind === 'book').map((m) => sync.onMessage(m));
    expect(outcomes).toEqual(['snapshot', ...Array(bookFrames - 1).fill('applied')]);
    expect(new Set(inserts.map((t) => t.trdMatchID)).size).toBe(inserts.length);
  });

  test('inverse XBTUSD: size counts USD contracts; base = size x 1 / price equals the venue own homeNotional', () => {
    const parsed = parseRecorded();
    const xbt = raw.filter((j) => j?.table === 'trade' && j.action === 'insert').flatMap((j) => j!.data!).filter((t) => t.homeNotional !== undefined && (t as { symbol?: string }).symbol === 'XBTUSD');
    const ours = tradesOf(parsed.flat()).filter((t) => t.symbol === 'XBTUSD');
    expect(ours.length).toBe(xbt.length);
    expect(xbt.length).toBeGreaterThan(0);
    for (const t of xbt) {
      const trade = ours.find((o) => o.tradeId === t.trdMatchID)!;
      expect(trade.ts).toBe(Date.parse(t.timestamp!));
      // BitMEX values each contract in whole satoshis (1e8 / price, rounded) before multiplying by the
      // size: ours, exact, may differ by half a satoshi per contract.
      expect(Math.abs(toTradeEvent('bitmex', xbtusd, trade, 1)!.quantity - t.homeNotional!)).toBeLessThanOrEqual(t.size! * 0.5e-8 + 1e-8);
    }
  });
});

describe('bitmex trade history (REST GET /api/v1/trade: the whole history, paged on the millisecond)', () => {
  const rest = () => bitmex.history!.rest!;
  const recorded = () => fixture('bitmex', 'rest_recorded_trade.json') as { timestamp: string; symbol: string; trdMatchID: string; homeNotional: number }[];

  test('continuity by time, no reach limit, under 30 requests a minute; pages from the cursor millisecond (included), oldest first, 1000 at most', () => {
    expect(bitmex.history).toMatchObject({ continuity: 'time' });
    expect(rest().reachMs).toBeUndefined();
    expect(rest().latestOnly).toBeUndefined();
    expect(rest().requestsPerSecond * 60).toBeLessThan(30);
    expect(rest().url('https://www.bitmex.com', 'XBTUSD', { ts: Date.UTC(2018, 7, 28, 0, 0, 2, 735), tradeId: 'b9a42432-0a46-6a2f-5ecc-c32e9ca4baf8' })).toBe(
      'https://www.bitmex.com/api/v1/trade?symbol=XBTUSD&startTime=2018-08-28T00%3A00%3A02.735Z&count=1000&reverse=false',
    );
  });

  test('a recorded page: rows as the websocket writes them (trdMatchID, taker side, USD contracts); a short page is the last', () => {
    expect(rest().parse(recorded(), 'XBTUSD')).toEqual({
      trades: [
        { kind: 'trade', symbol: 'XBTUSD', tradeId: 'b9a42432-0a46-6a2f-5ecc-c32e9ca4baf8', price: '6906.5', quantity: '2000', side: 'buy', ts: Date.UTC(2018, 7, 28, 0, 0, 2, 735) },
        { kind: 'trade', symbol: 'XBTUSD', tradeId: '0d4f1682-5270-a800-569b-4a0eb92db97c', price: '6906', quantity: '1000', side: 'sell', ts: Date.UTC(2018, 7, 28, 0, 0, 3, 778) },
      ],
      more: false,
    });
    const full = Array.from({ length: tradePageSize }, (_, i) => ({ ...recorded()[i % 2]!, trdMatchID: `id-${i}` }));
    expect(parseTradeHistory(full, 'XBTUSD')!.more).toBe(true);
    expect(parseTradeHistory(full.slice(1), 'XBTUSD')!.more).toBe(false);
  });

  test("inverse XBTUSD: a REST trade in base units is size / price, the venue's own homeNotional", () => {
    const page = parseTradeHistory(recorded(), 'XBTUSD')!;
    const events = page.trades.map((t) => toTradeEvent('bitmex', xbtusd, t, 1)!);
    expect(events.map((e) => e.quantity.toFixed(5))).toEqual(recorded().map((r) => r.homeNotional.toFixed(5)));
  });

  test('a REST trade is the websocket trade of the same execution: one id, price, base quantity, side and time', () => {
    const [row] = recorded();
    const [fromRest] = parseTradeHistory([row], 'XBTUSD')!.trades;
    const [fromWs] = bitmex.parse(JSON.stringify({ table: 'trade', action: 'insert', data: [row] }));
    expect(toTradeEvent('bitmex', xbtusd, fromRest!, 1)).toEqual(toTradeEvent('bitmex', xbtusd, fromWs as NonNullable<typeof fromRest>, 1));
  });

  test("the refusal past the rate limit, another market's rows and rows without their id are not understood", () => {
    expect(parseTradeHistory(fixture('bitmex', 'rest_recorded_rate_limited.json'), 'XBTUSD')).toBeUndefined();
    expect(parseTradeHistory(recorded(), 'ETHUSD')).toBeUndefined();
    expect(parseTradeHistory([{ ...recorded()[0]!, trdMatchID: '' }], 'XBTUSD')).toBeUndefined();
  });
});

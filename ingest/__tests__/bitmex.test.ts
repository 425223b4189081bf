import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLevels, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { bitmex, bitmexSession, parseInstruments } from '../venues/bitmex.ts';
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

  test('instruments: open inverse perpetuals only, contract value from the multipliers', () => {
    const listings = parseInstruments(fixture('bitmex', 'rest_instrument_active.json'));
    expect(listings).toEqual([{ symbol: 'XBTUSD', base: 'XBT', quote: 'USD', contractSize: '1', inverse: true }]);
    expect(selectMarkets(bitmex, listings).markets.map((m) => m.asset)).toEqual(['bitcoin']);
  });

  test('subscriptions: trade, orderBookL2 and liquidation per market, on one socket', () => {
    const [plan, ...rest] = bitmex.sockets({ ws: 'wss://b', rest: 'https://b' }, [xbtusd]);
    expect(rest).toEqual([]);
    expect(plan!.url).toBe('wss://b/realtime');
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([{ op: 'subscribe', args: ['trade:XBTUSD', 'orderBookL2:XBTUSD', 'liquidation:XBTUSD'] }]);
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
});

describe('bitmex recorded session (cryptofeed, 2021-07-22, BCHUSD orderBookL2 and XBTUSD, BCHUSD trades of one connection)', () => {
  const session = recordedSession('bitmex');
  const connection = bitmex.session!();
  const parsed = session.map((f) => connection.parse(f.text));
  const raw = session.map((f) => (f.text === 'pong' ? undefined : (JSON.parse(f.text) as { table?: string; action?: string; data?: { trdMatchID?: string; size?: number; price?: number; homeNotional?: number; timestamp?: string }[] })));

  test('every frame parses; the book never contradicts itself (no skipped number); trade ids unique', () => {
    const bookFrames = raw.filter((j) => j?.table === 'orderBookL2').length;
    const inserts = raw.filter((j) => j?.table === 'trade' && j.action === 'insert').flatMap((j) => j!.data!);
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': raw.filter((j) => j && !j.table).length, 'control:status': 2, book: bookFrames, trade: inserts.length });
    const sync = new BookSync(bitmex.book, { symbol: 'BCHUSD', base: 'BCH', quote: 'USD', asset: 'bitcoin-cash', contractSize: '1' });
    const outcomes = parsed.flat().filter((m): m is BookMessage => m.kind === 'book').map((m) => sync.onMessage(m));
    expect(outcomes).toEqual(['snapshot', ...Array(bookFrames - 1).fill('applied')]);
    expect(new Set(inserts.map((t) => t.trdMatchID)).size).toBe(inserts.length);
  });

  test('inverse XBTUSD: size counts USD contracts; base = size x 1 / price equals the venue own homeNotional', () => {
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

import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket } from '../venue.ts';
import { bybit, bybitLinear, parseInstruments, parseRecentTrades } from '../venues/bybit.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, tradesOf } from './recorded.ts';

const parseAll = (name: string) => frames('bybit', name).flatMap(bybit.parse);
const btc: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };

describe('bybit messages', () => {
  test('trades: S is the taker side, ids are the venue strings', () => {
    expect(parseAll('ws_trade.json')).toEqual([
      { kind: 'trade', symbol: 'BTCUSDT', tradeId: '3f1e5a2c-0b1d-5e33-9d2e-6a4b2c0e9f11', price: '87012.40', quantity: '0.015', side: 'sell', ts: 1767225600121 },
      { kind: 'trade', symbol: 'BTCUSDT', tradeId: '3f1e5a2c-0b1d-5e33-9d2e-6a4b2c0e9f12', price: '87012.50', quantity: '0.200', side: 'buy', ts: 1767225600125 },
    ]);
  });

  test('allLiquidation: S is the POSITION side (Buy = a long liquidated), the reverse of Binance and OKX', () => {
    expect(parseAll('ws_liquidation.json')).toEqual([
      { kind: 'liquidation', symbol: 'SOLUSDT', liquidationId: '1767225600929-Buy-20.5@186.02', price: '186.02', quantity: '20.5', positionSide: 'long', ts: 1767225600929 },
      { kind: 'liquidation', symbol: 'SOLUSDT', liquidationId: '1767225601001-Sell-3@188.40', price: '188.40', quantity: '3', positionSide: 'short', ts: 1767225601001 },
    ]);
    expect(bybitLinear.liquidations?.sampled).toBe(false);
  });

  test('replies: acks, refused subscriptions, both pong shapes; unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'error', detail: 'subscribe: error:handler not found,topic:orderbook.50.NOPEUSDT' },
      { kind: 'control', what: 'pong' },
      { kind: 'control', what: 'pong' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('JSON that is no v5 envelope, a liquidation without its price, a book delta without its id and a topic we do not parse are unknown, never thrown', () => {
    // Hand-written in the v5 push envelope (docs: "All Liquidation"). The last frame's rows carry
    // every field of a liquidation: only the topic says what a frame is.
    const liquidationRow = { T: 1767225600929, s: 'SOLUSDT', S: 'Buy', v: '20.5', p: '186.02' };
    const odd = [
      'null',
      '[]',
      JSON.stringify({ topic: 'allLiquidation.SOLUSDT', type: 'snapshot', ts: 1767225601204, data: [{ ...liquidationRow, p: undefined }] }),
      JSON.stringify({ topic: 'tickers.SOLUSDT', type: 'snapshot', ts: 1767225601204, data: [liquidationRow] }),
      // An orderbook delta without its update id `u` (docs: "Orderbook"): it could not be chained.
      JSON.stringify({ topic: 'orderbook.50.BTCUSDT', type: 'delta', ts: 1767225600120, data: { s: 'BTCUSDT', b: [['87000.00', '0.400']], a: [], seq: 7961638730 }, cts: 1767225600118 }),
    ];
    expect(odd.map(bybit.parse)).toEqual([[{ kind: 'unknown' }], [{ kind: 'unknown' }], [{ kind: 'unknown' }], [{ kind: 'unknown' }], [{ kind: 'unknown' }]]);
  });

  test('subscriptions: at most 10 arguments per request, numbered req_ids; liquidations on linear only', () => {
    const markets = ['BTC', 'ETH', 'SOL', 'XRP'].map((b): VenueMarket => ({ symbol: `${b}USDT`, base: b, quote: 'USDT', asset: b, contractSize: '1' }));
    const [spot] = bybit.sockets({ ws: 'wss://b', rest: 'https://b' }, markets);
    const [linear] = bybitLinear.sockets({ ws: 'wss://b', rest: 'https://b' }, markets);
    expect(spot!.url).toBe('wss://b/v5/public/spot');
    expect(linear!.url).toBe('wss://b/v5/public/linear');
    expect(spot!.symbols).toEqual(['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT']);
    expect(spot!.subscribe.map((s) => JSON.parse(s).args.length)).toEqual([8]);
    expect(linear!.subscribe.map((s) => JSON.parse(s).args.length)).toEqual([10, 2]);
    expect(linear!.subscribe.map((s) => JSON.parse(s))).toMatchObject([
      { op: 'subscribe', req_id: 'subscribe-1' },
      { op: 'subscribe', args: ['orderbook.50.XRPUSDT', 'allLiquidation.XRPUSDT'], req_id: 'subscribe-2' },
    ]);
    expect(JSON.parse(linear!.subscribe[0]!).args.slice(0, 3)).toEqual(['publicTrade.BTCUSDT', 'orderbook.50.BTCUSDT', 'allLiquidation.BTCUSDT']);
  });
});

describe('bybit instruments', () => {
  test('spot: every trading pair (spot has no contract type)', () => {
    expect(parseInstruments(fixture('bybit', 'rest_instruments_spot.json'), 'spot')).toEqual({
      listings: [
        { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', contractSize: '1' },
        { symbol: 'ETHBTC', base: 'ETH', quote: 'BTC', contractSize: '1' },
      ],
      nextPageCursor: undefined,
    });
  });

  test('linear: trading perpetuals only; an empty nextPageCursor is the last page; unit-prefixed bases (10000SATS) are unmapped, not guessed', () => {
    const page = parseInstruments(fixture('bybit', 'rest_instruments_linear.json'), 'linear');
    expect(page).toEqual({
      listings: [
        { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', contractSize: '1' },
        { symbol: 'ETHPERP', base: 'ETH', quote: 'USDC', contractSize: '1' },
        { symbol: '10000SATSUSDT', base: '10000SATS', quote: 'USDT', contractSize: '1' },
      ],
      nextPageCursor: undefined,
    });
    expect(parseInstruments(fixture('bybit', 'rest_instruments_linear_page1.json'), 'linear').nextPageCursor).toBe('page 2');
    const { markets, unmapped } = selectMarkets(bybitLinear, page.listings);
    expect(markets.map((m) => [m.symbol, m.asset, m.quote])).toEqual([
      ['BTCUSDT', 'bitcoin', 'USDT'],
      ['ETHPERP', 'ethereum', 'USDC'],
    ]);
    expect(unmapped).toEqual(['10000SATSUSDT']);
  });

  test("a refused request (an empty or null result) throws the venue's code and message", () => {
    expect(() => parseInstruments(fixture('bybit', 'rest_error.json'), 'linear')).toThrow(/^instruments-info: 10001 Illegal category$/);
    // retMsg is optional in our schema: without it the code alone is reported.
    expect(() => parseInstruments({ retCode: 10006, result: null }, 'linear')).toThrow(/^instruments-info: 10006 $/);
  });

  test('the market listing follows nextPageCursor (URL-encoded) until a page has none', async () => {
    const first = 'https://b/v5/market/instruments-info?category=linear&limit=1000';
    const second = `${first}&cursor=page%202`;
    const { io, asked } = cannedIo({ [first]: fixture('bybit', 'rest_instruments_linear_page1.json'), [second]: fixture('bybit', 'rest_instruments_linear.json') });
    const listings = await bybitLinear.listMarkets(io, { ws: 'wss://b', rest: 'https://b' });
    expect(asked).toEqual([first, second]);
    expect(listings.map((l) => l.symbol)).toEqual(['SOLUSDT', 'BTCUSDT', 'ETHPERP', '10000SATSUSDT']);
  });
});

describe('bybit book sync', () => {
  test('book frames: levels as sent, u as the id; the time is cts (when the matching engine made the book), ts without it', () => {
    expect(parseAll('ws_book_snapshot.json')).toEqual([
      { kind: 'book', symbol: 'BTCUSDT', snapshot: true, bids: [['87000.10', '1.250'], ['86999.90', '3.000']], asks: [['87000.20', '0.800'], ['87000.50', '2.500']], lastId: 18521288, ts: 1767225600098 },
    ]);
    // The recorded 2023 frames predate cts: their ts is the time.
    const [recordedSnapshot] = frames('bybit', 'ws_recorded_tardis.json').flatMap(bybit.parse).filter((m) => m.kind === 'book');
    expect(recordedSnapshot).toMatchObject({ symbol: 'BTCUSDT', snapshot: true, lastId: 59438060, ts: 1680652808065 });
  });

  test('a snapshot, then deltas whose u continues it; a jump in u is a counted resync; a new snapshot restores', () => {
    const [snapshot] = parseAll('ws_book_snapshot.json') as BookMessage[];
    const [update, gap] = parseAll('ws_book_update.json') as BookMessage[];
    const sync = new BookSync(bybit.book, btc);
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.onMessage(update!)).toBe('applied');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 0.4], [86999.9, 3]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.2, 0.8], [87000.3, 1], [87000.5, 2.5]]);
    expect(sync.onMessage(update!)).toBe('stale');
    expect(sync.onMessage(gap!)).toBe('gap');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
    // A snapshot at any time (u = 1 after a service restart included) replaces the book.
    expect(sync.onMessage({ ...snapshot!, lastId: 1 })).toBe('snapshot');
    expect(sync.onMessage({ ...update!, lastId: 2 })).toBe('applied');
  });

  test('a fresh snapshot is asked for by unsubscribing and resubscribing the book topics', () => {
    expect(bybit.book.resubscribe!(['BTCUSDT', 'ETHUSDT']).map((m) => JSON.parse(m))).toEqual([
      { op: 'unsubscribe', args: ['orderbook.50.BTCUSDT', 'orderbook.50.ETHUSDT'], req_id: 'unsubscribe-1' },
      { op: 'subscribe', args: ['orderbook.50.BTCUSDT', 'orderbook.50.ETHUSDT'], req_id: 'subscribe-1' },
    ]);
  });
});

describe('bybit recorded frames (Tardis.dev samples, v5, 2023-2025): spot and linear trades, orderbook.50, allLiquidation', () => {
  const recorded = fixture('bybit', 'ws_recorded_tardis.json') as { topic: string; data: { i?: string; S?: string; T?: number; u?: number }[] | { u: number } }[];

  test('every frame parses: S the taker side of a trade, the position side of a liquidation; T in ms; deltas continue u', () => {
    const parsed = frames('bybit', 'ws_recorded_tardis.json').map(bybit.parse);
    const rows = (topic: string) => recorded.filter((f) => f.topic.startsWith(topic)).flatMap((f) => (Array.isArray(f.data) ? f.data : [f.data]));
    expect(countKinds(parsed.flat())).toEqual({ trade: rows('publicTrade.').length, book: rows('orderbook.').length, liquidation: rows('allLiquidation.').length });
    const trades = tradesOf(parsed.flat());
    expect(trades.map((t) => t.side)).toEqual(rows('publicTrade.').map((r) => (r.S === 'Buy' ? 'buy' : 'sell')));
    expect(new Set(trades.map((t) => t.tradeId)).size).toBe(trades.length);
    expect(parsed.flat().find((m) => m.kind === 'liquidation')).toMatchObject({ symbol: 'PIPPINUSDT', positionSide: 'short', ts: rows('allLiquidation.')[0]!.T });
    const books = parsed.flat().filter((m): m is BookMessage => m.kind === 'book');
    expect(books.map((b) => bybit.book.sequence!(b.lastId! - 1, b, false))).toEqual(books.map(() => 'apply'));
  });
});

describe('bybit trade history (REST recent-trade: the latest trades only)', () => {
  const rest = (venue: typeof bybit) => venue.history!.rest!;

  test('continuity by time; the latest 60 spot or 1000 linear trades, the same request whatever the cursor', () => {
    expect(bybit.history).toMatchObject({ continuity: 'time', rest: { latestOnly: 60 } });
    expect(bybitLinear.history).toMatchObject({ continuity: 'time', rest: { latestOnly: 1000 } });
    expect(rest(bybit).reachMs).toBeUndefined();
    const spot = 'https://api.bybit.com/v5/market/recent-trade?category=spot&symbol=BTCUSDT&limit=60';
    expect(rest(bybit).url('https://api.bybit.com', 'BTCUSDT', { ts: 1_672_052_955_758, tradeId: '2100000000007764263' })).toBe(spot);
    expect(rest(bybit).url('https://api.bybit.com', 'BTCUSDT', { ts: 0 })).toBe(spot);
    expect(rest(bybitLinear).url('https://api.bybit.com', 'BTCUSDT', { ts: 0 })).toBe('https://api.bybit.com/v5/market/recent-trade?category=linear&symbol=BTCUSDT&limit=1000');
  });

  test("the documentation's answer: execId (the websocket's i) is the id, side the taker's, time in ms; nothing more to page", () => {
    expect(rest(bybit).parse(fixture('bybit', 'rest_recent_trade.json'), 'BTCUSDT')).toEqual({
      trades: [{ kind: 'trade', symbol: 'BTCUSDT', tradeId: '2100000000007764263', price: '16618.49', quantity: '0.00012', side: 'buy', ts: 1672052955758 }],
      more: false,
    });
    expect(rest(bybitLinear).parse).toBe(parseRecentTrades);
  });

  test('a REST trade is the websocket trade of the same execution: one id, price, base quantity, side and time', () => {
    const [fromRest] = parseRecentTrades(fixture('bybit', 'rest_recent_trade.json'), 'BTCUSDT')!.trades;
    // The same execution as the publicTrade topic writes it (docs: "Trade"): T, s, S, v, p, i.
    const frame = JSON.stringify({ topic: 'publicTrade.BTCUSDT', type: 'snapshot', ts: 1672052955760, data: [{ T: 1672052955758, s: 'BTCUSDT', S: 'Buy', v: '0.00012', p: '16618.49', L: 'PlusTick', i: '2100000000007764263', BT: false }] });
    const [fromWs] = bybit.parse(frame);
    expect(toTradeEvent('bybit', btc, fromRest!, 1)).toEqual(toTradeEvent('bybit', btc, fromWs as NonNullable<typeof fromRest>, 1));
  });

  test("a refusal, another market's trades and a body that is no answer are not understood", () => {
    expect(parseRecentTrades(fixture('bybit', 'rest_error.json'), 'BTCUSDT')).toBeUndefined();
    expect(parseRecentTrades(fixture('bybit', 'rest_recent_trade.json'), 'ETHUSDT')).toBeUndefined();
    expect(parseRecentTrades('access too frequent', 'BTCUSDT')).toBeUndefined();
    expect(parseRecentTrades({ retCode: 0, retMsg: 'OK', result: { list: [{ symbol: 'BTCUSDT', price: '1', size: '1', side: 'Buy', time: '1' }] } }, 'BTCUSDT')).toBeUndefined();
  });
});

import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket } from '../venue.ts';
import { binance, binanceSockets, parseDepthUpdate, parseExchangeInfo } from '../venues/binance.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, replayWithRest, type RecordedRest, type Trade } from './recorded.ts';

const load = (name: string) => fixture('binance', name);
const parseAll = (name: string) => frames('binance', name).flatMap(binance.parse);
const btc: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };

describe('binance messages', () => {
  test('trades: taker side from the maker flag, ids and decimals as the venue sent them', () => {
    const [first, second] = parseAll('ws_trade.json');
    expect(first).toEqual({ kind: 'trade', symbol: 'BTCUSDT', tradeId: '4812345601', seq: 4812345601, price: '87012.45000000', quantity: '0.01520000', side: 'sell', ts: 1767225600121 });
    expect(second).toMatchObject({ kind: 'trade', symbol: 'ETHUSDT', side: 'buy', price: '2951.10000000', quantity: '1.25000000' });
    expect(toTradeEvent('binance', btc, first as Extract<typeof first, { kind: 'trade' }>, 1767225600200)).toEqual({
      type: 'trade', venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', tradeId: '4812345601',
      price: 87012.45, quantity: 0.0152, side: 'sell', ts: 1767225600121, receivedAt: 1767225600200,
    });
  });

  test('depth diffs carry their first and last update ids; a USD-M diff also its pu, a spot diff no prevId at all', () => {
    expect(parseAll('ws_depth_diff.json')[0]).toStrictEqual({
      kind: 'book', symbol: 'BTCUSDT', snapshot: false, firstId: 157, lastId: 160, ts: 1767225600100,
      bids: [['87000.00', '1.50000000'], ['86999.00', '0.00000000']], asks: [['87001.00', '2.00000000']],
    });
    const [usdm] = fixture('binance-futures', 'ws_book_update.json') as { data: Record<string, unknown> }[];
    expect(parseDepthUpdate(usdm!.data)).toStrictEqual({
      kind: 'book', symbol: 'BTCUSDT', snapshot: false, firstId: 198, lastId: 201, prevId: 197, ts: 1767225600100,
      bids: [['87000.00', '1.500'], ['86999.90', '0']], asks: [],
    });
  });

  test('acks, errors, the shutdown notice (a reconnect request) and unknown frames', () => {
    expect(parseAll('ws_subscribe_ack.json')).toEqual([{ kind: 'control', what: 'ack' }, { kind: 'control', what: 'ack' }]);
    expect(parseAll('ws_error.json')).toEqual([{ kind: 'control', what: 'error', detail: '2: Invalid request: unknown method' }]);
    expect(parseAll('ws_server_shutdown.json')).toEqual([
      { kind: 'control', what: 'reconnect', detail: 'serverShutdown' },
      { kind: 'control', what: 'reconnect', detail: 'serverShutdown' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('JSON null, a combined-stream envelope without a payload, and a diff without U are unknown, never thrown', () => {
    // Hand-written in the combined-stream envelope and the "Diff. Depth Stream" payload.
    const diff = { e: 'depthUpdate', E: 1767225600100, s: 'BTCUSDT', u: 160, b: [['87000.00', '1.50000000']], a: [] };
    const odd = ['null', JSON.stringify({ stream: 'btcusdt@trade', data: null }), JSON.stringify({ stream: 'btcusdt@depth@100ms', data: diff })];
    expect(odd.map(binance.parse)).toEqual([[{ kind: 'unknown' }], [{ kind: 'unknown' }], [{ kind: 'unknown' }]]);
  });

  test('markets: trading, USD-quoted, in the catalog; the rest listed as unmapped', () => {
    const { markets, unmapped } = selectMarkets(binance, parseExchangeInfo(load('rest_exchange_info.json')));
    expect(markets).toEqual([
      { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', contractSize: '1', asset: 'bitcoin' },
      { symbol: 'SOLUSDC', base: 'SOL', quote: 'USDC', contractSize: '1', asset: 'solana' },
    ]);
    expect(unmapped).toEqual(['MEMEUSDT']);
  });

  test('the market listing reads /api/v3/exchangeInfo; without a contract type every trading symbol is kept, dated futures too', async () => {
    const { io, asked } = cannedIo({ 'https://x/api/v3/exchangeInfo': load('rest_exchange_info.json') });
    expect((await binance.listMarkets(io, { ws: 'wss://x', rest: 'https://x' })).map((l) => l.symbol)).toEqual(['BTCUSDT', 'ETHBTC', 'SOLUSDC', 'MEMEUSDT']);
    expect(asked).toEqual(['https://x/api/v3/exchangeInfo']);
    expect(parseExchangeInfo(fixture('binance-futures', 'rest_exchange_info.json')).map((l) => l.symbol)).toEqual(['BTCUSDT', 'BTCUSDT_260327', '1000PEPEUSDT', 'ETHUSDC']);
  });

  test('subscriptions: a market streams trades and 100 ms diffs, at most 200 streams per request', () => {
    const markets = Array.from({ length: 150 }, (_, i): VenueMarket => ({ symbol: `A${i}USDT`, base: `A${i}`, quote: 'USDT', asset: `a${i}`, contractSize: '1' }));
    const [plan, ...more] = binance.sockets({ ws: 'wss://x', rest: 'https://x' }, markets);
    expect(more).toEqual([]);
    expect(plan!.url).toBe('wss://x/stream');
    const messages = plan!.subscribe.map((m) => JSON.parse(m));
    expect(messages.map((m) => m.params.length)).toEqual([200, 100]);
    expect(messages[0]).toMatchObject({ method: 'SUBSCRIBE', id: 1 });
    expect(messages[0].params.slice(0, 2)).toEqual(['a0usdt@trade', 'a0usdt@depth@100ms']);
  });

  test("sockets: a market's streams stay together, extra streams count against the first socket only and ride on it alone; no markets, no sockets", () => {
    const markets = ['AUSDT', 'BUSDT', 'CUSDT'].map((symbol): VenueMarket => ({ symbol, base: symbol, quote: 'USDT', asset: symbol, contractSize: '1' }));
    const streamsOf = (m: VenueMarket) => [`${m.symbol}@trade`, `${m.symbol}@depth`];
    const limits = { perSocket: 5, perMessage: 2 };
    // (5 streams - 1 extra) / 2 per market: two markets per socket.
    const plans = binanceSockets('wss://x/stream', markets, streamsOf, limits, ['!forceOrder@arr']);
    expect(plans.map((p) => [p.url, p.symbols, p.subscribe.map((m) => JSON.parse(m))])).toEqual([
      ['wss://x/stream', ['AUSDT', 'BUSDT'], [
        { method: 'SUBSCRIBE', params: ['AUSDT@trade', 'AUSDT@depth'], id: 1 },
        { method: 'SUBSCRIBE', params: ['BUSDT@trade', 'BUSDT@depth'], id: 2 },
        { method: 'SUBSCRIBE', params: ['!forceOrder@arr'], id: 3 },
      ]],
      ['wss://x/stream', ['CUSDT'], [{ method: 'SUBSCRIBE', params: ['CUSDT@trade', 'CUSDT@depth'], id: 1 }]],
    ]);
    expect(binanceSockets('wss://x/stream', [], streamsOf, limits, ['!forceOrder@arr'])).toEqual([]);
  });
});

describe('binance book sync', () => {
  const loadDiffs = () => parseAll('ws_depth_diff.json') as BookMessage[];
  const loadSnapshot = () => binance.book.restSnapshot!.parse(load('rest_depth_snapshot.json'));

  test('snapshot + buffered diffs: stale ones dropped, the rest applied in order', () => {
    const [diffs, snapshot] = [loadDiffs(), loadSnapshot()];
    const sync = new BookSync(binance.book, btc);
    expect(sync.onMessage(diffs[0]!)).toBe('buffered');
    expect(sync.onMessage(diffs[1]!)).toBe('buffered');
    expect(sync.wantsRestSnapshot).toBe(true);
    // lastUpdateId 158 lies inside the first diff (157..160): it applies, then 161..163.
    expect(sync.onRestSnapshot(snapshot)).toBe('synced');
    expect(sync.book.top('bid', 10)).toEqual([[87000, 1.5], [86998, 3], [86997, 2]]);
    expect(sync.book.top('ask', 10)).toEqual([[87002, 0.75], [87003, 5]]);
    // A diff already contained in the book is ignored.
    expect(sync.onMessage(diffs[1]!)).toBe('stale');
  });

  test('a snapshot older than the first buffered diff is refetched', () => {
    const [diffs, snapshot] = [loadDiffs(), loadSnapshot()];
    const sync = new BookSync(binance.book, btc);
    sync.onMessage(diffs[1]!);
    expect(sync.onRestSnapshot(snapshot)).toBe('refetch');
    expect(sync.synced).toBe(false);
  });

  test('a gap in the update ids discards the book and forces a counted resync', () => {
    const [diffs, snapshot] = [loadDiffs(), loadSnapshot()];
    const sync = new BookSync(binance.book, btc);
    sync.onMessage(diffs[0]!);
    sync.onRestSnapshot(snapshot);
    expect(sync.onMessage(diffs[1]!)).toBe('applied');
    // 164..165 never arrived.
    expect(sync.onMessage(diffs[2]!)).toBe('gap');
    expect(sync.resyncs).toBe(1);
    expect(sync.synced).toBe(false);
    expect(sync.book.top('bid', 5)).toEqual([]);
    expect(sync.wantsRestSnapshot).toBe(true);
    // A fresh snapshot at 167 brings it back, applying the buffered 166..168.
    expect(sync.onRestSnapshot({ lastId: 167, bids: [['87000', '9']], asks: [['87005', '1']] })).toBe('synced');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 0.1]]);
  });

  test('the sequence rule: the first diff applied holds the id after the snapshot; later ones start right after the last; one without ids never applies', () => {
    // The diffs of ws_depth_diff.json: 157..160, 161..163, 166..168.
    const [first, second, third] = loadDiffs();
    const sequence = binance.book.sequence!;
    const fresh = true;
    expect([
      sequence(158, first!, fresh), // 159 inside 157..160
      sequence(156, first!, fresh), // 157 starts it
      sequence(155, first!, fresh), // 156 is missing
      sequence(160, first!, fresh), // wholly held by the snapshot
      sequence(158, { ...first!, lastId: undefined }, fresh),
    ]).toEqual(['apply', 'apply', 'gap', 'stale', 'gap']);
    expect([sequence(160, second!, !fresh), sequence(163, third!, !fresh), sequence(163, second!, !fresh)]).toEqual(['apply', 'gap', 'stale']);
  });

  test('the REST snapshot is /api/v3/depth of 1000 levels', () => {
    expect(binance.book.restSnapshot!.url('https://x', 'BTCUSDT')).toBe('https://x/api/v3/depth?symbol=BTCUSDT&limit=1000');
  });
});

/** A spot `depthUpdate` diff as recorded, read without our parser. */
type RawDepth = { stream: string; data: { E: number; s: string; U: number; u: number; b: string[][]; a: string[][] } };

describe('binance recorded session (cryptofeed, 2021-10-12, depth@100ms of four pairs, and their REST snapshots)', () => {
  const session = recordedSession('binance');
  const raw = session.map((f) => ({ at: f.at, json: JSON.parse(f.text) as RawDepth }));
  const parseSession = () => session.map((f) => binance.parse(f.text));
  const rest = fixture('binance', 'rest_recorded_depth.json') as Record<string, RecordedRest>;

  test('177 diffs, each one book message with its U, u and E; E in ms, at most 2 s before receipt', () => {
    const parsed = parseSession();
    expect(countKinds(parsed.flat())).toEqual({ book: 177 });
    raw.forEach(({ at, json }, i) => {
      expect(parsed[i]).toEqual([expect.objectContaining({ symbol: json.data.s, snapshot: false, firstId: json.data.U, lastId: json.data.u, ts: json.data.E })]);
      expect(at * 1000 - json.data.E).toBeGreaterThan(-50);
      expect(at * 1000 - json.data.E).toBeLessThan(2_000);
    });
  });

  test('each pair syncs on its REST snapshot and every later diff continues it: no gap over the recording', () => {
    const parsed = parseSession();
    expect(Object.keys(rest).sort()).toEqual(['BLZETH', 'LRCBTC', 'NKNUSDT', 'RUNEEUR']);
    for (const [symbol, snapshot] of Object.entries(rest)) {
      const updates = raw.flatMap(({ at, json }, i) => (json.data.s === symbol ? [{ at, message: parsed[i]![0] as BookMessage }] : []));
      const market = { symbol, base: symbol, quote: '', asset: symbol, contractSize: '1' };
      const sync = new BookSync(binance.book, market);
      const outcome = replayWithRest(sync, binance.book, updates, snapshot);
      expect(outcome.snapshot).toBe('synced');
      expect(outcome.after.every((o) => o === 'applied' || o === 'stale')).toBe(true);
      expect(outcome.after.filter((o) => o === 'applied').length).toBeGreaterThan(0);
      expect(sync.resyncs).toBe(0);
    }
  });
});

describe('binance recorded frames (Tardis.dev samples, 2019): trades and diffs', () => {
  const recorded = fixture('binance', 'ws_recorded_tardis.json') as { data: { e: string; t?: number; p?: string; q?: string; T?: number; m?: boolean } }[];

  test('m (buyer is maker) gives the taker side; trade time T in ms', () => {
    const parsed = frames('binance', 'ws_recorded_tardis.json').map(binance.parse);
    expect(countKinds(parsed.flat())).toEqual({ trade: 2, book: 4 });
    recorded.forEach((f, i) => {
      if (f.data.e !== 'trade') return;
      expect(parsed[i]).toEqual([{ kind: 'trade', symbol: 'BNBBTC', tradeId: String(f.data.t), seq: f.data.t, price: f.data.p, quantity: f.data.q, side: f.data.m ? 'sell' : 'buy', ts: f.data.T }]);
    });
  });
});

describe('binance trade history (historicalTrades)', () => {
  const rest = binance.history!.rest!;
  const docsPage = () => fixture('binance', 'rest_historical_trades.json');

  test('trades are numbered consecutively per symbol: each recorded kline counts as many trades as its first and last ids span', () => {
    expect(binance.history!.continuity).toBe('sequential');
    const frames = recordedSession('binance', 'ws_recorded_kline_cryptofeed.json').map((f) => JSON.parse(f.text).data);
    const klines = frames.filter((d) => d.e === 'kline').map((d) => d.k as { s: string; f: number; L: number; n: number });
    expect(klines.map((k) => [k.s, k.n, k.L - k.f + 1])).toEqual([['NKNUSDT', 30, 30], ['LRCBTC', 1, 1]]);
    // The aggregate trade printed in that minute ends on the kline's last trade id.
    const nkn = frames.find((d) => d.e === 'aggTrade' && d.s === 'NKNUSDT');
    expect(nkn.l).toBe(klines[0]!.L);
  });

  test('url: 1000 trades from the one after the cursor; a cursor without a number can only ask the latest', () => {
    expect(rest.url('https://x', 'BTCUSDT', { ts: 1767225600121, seq: 4812345601 })).toBe('https://x/api/v3/historicalTrades?symbol=BTCUSDT&limit=1000&fromId=4812345602');
    expect(rest.url('https://x', 'BTCUSDT', { ts: 1767225600121 })).toBe('https://x/api/v3/historicalTrades?symbol=BTCUSDT&limit=1000');
  });

  test('parse: the documented page, the taker side from isBuyerMaker; a short page is the last, a full one may have more; the refusal is no page', () => {
    expect(rest.parse(docsPage(), 'BNBBTC')).toEqual({
      trades: [{ kind: 'trade', symbol: 'BNBBTC', tradeId: '28457', seq: 28457, price: '4.00000100', quantity: '12.00000000', side: 'sell', ts: 1499865549590 }],
      more: false,
    });
    const [row] = docsPage() as Record<string, unknown>[];
    const full = Array.from({ length: 1_000 }, (_, i) => ({ ...row, id: 28457 + i, isBuyerMaker: false }));
    const page = rest.parse(full, 'BNBBTC')!;
    expect([page.more, page.trades.length, page.trades[999]?.seq, page.trades[0]?.side]).toEqual([true, 1_000, 29456, 'buy']);
    expect(rest.parse(fixture('binance', 'rest_rate_limited.json'), 'BNBBTC')).toBeUndefined();
    expect(rest.parse([{ ...row, price: 4.000001 }], 'BNBBTC')).toBeUndefined();
  });

  test('a trade from a page is the event its websocket frame gives; pace under the IP weight budget (25 of 6,000 a minute)', () => {
    // The first frame of ws_trade.json as historicalTrades writes the same trade (the documented row's fields).
    const row = { id: 4812345601, price: '87012.45000000', qty: '0.01520000', quoteQty: '1322.58924000', time: 1767225600121, isBuyerMaker: true, isBestMatch: true };
    const [fromRest] = rest.parse([row], 'BTCUSDT')!.trades;
    const [fromSocket] = parseAll('ws_trade.json') as Trade[];
    expect(fromRest).toEqual(fromSocket);
    expect(toTradeEvent('binance', btc, fromRest!, 7)).toEqual(toTradeEvent('binance', btc, fromSocket!, 7));
    expect(rest.requestsPerSecond * 60 * 25).toBeLessThan(6_000);
  });
});

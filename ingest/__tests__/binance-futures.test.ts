import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { parseExchangeInfo } from '../venues/binance.ts';
import { binanceFutures } from '../venues/binance-futures.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, placedSide, recordedSession, replayWithRest, tradesOf, type RecordedRest } from './recorded.ts';

const parseAll = (name: string) => frames('binance-futures', name).flatMap(binanceFutures.parse);
const btc: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };

describe('binance-futures messages', () => {
  test('aggregate trades: one id per taker order and price, taker side from the maker flag', () => {
    expect(parseAll('ws_trade.json')).toEqual([
      { kind: 'trade', symbol: 'BTCUSDT', tradeId: '2290311001', seq: 2290311001, price: '87010.10', quantity: '0.150', side: 'sell', ts: 1767225600128 },
      { kind: 'trade', symbol: 'ETHUSDT', tradeId: '1888112', seq: 1888112, price: '2950.55', quantity: '3.412', side: 'buy', ts: 1767225600459 },
    ]);
  });

  test('liquidations: a forced SELL closed a long, filled quantity at the average price; unfilled orders are no liquidation', () => {
    const [long, short, expired] = parseAll('ws_liquidation.json');
    expect(long).toEqual({
      kind: 'liquidation', symbol: 'BTCUSDT', liquidationId: '1767225600998-SELL-0.350@86912.40', price: '86912.40', quantity: '0.350', positionSide: 'long', ts: 1767225600998,
    });
    expect(short).toMatchObject({ kind: 'liquidation', symbol: 'SOLUSDT', positionSide: 'short', price: '187.95', quantity: '120' });
    expect(expired).toEqual({ kind: 'control', what: 'status', detail: 'forceOrder EXPIRED' });
    expect(toLiquidationEvent('binance-futures', btc, long as Extract<VenueMessage, { kind: 'liquidation' }>, 1767225601010)).toEqual({
      type: 'liquidation', venue: 'binance-futures', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', liquidationId: '1767225600998-SELL-0.350@86912.40',
      price: 86912.4, quantity: 0.35, positionSide: 'long', ts: 1767225600998, receivedAt: 1767225601010,
    });
    expect(binanceFutures.liquidations).toMatchObject({ sampled: true });
  });

  test('a partly filled forced order is a liquidation of what was filled; a forceOrder without its average price is unknown', () => {
    // Hand-written in the "Liquidation Order Streams" payload; X takes the order statuses, PARTIALLY_FILLED among them.
    const order = { s: 'ETHUSDT', S: 'BUY', o: 'LIMIT', f: 'IOC', q: '2.000', p: '2960.00', ap: '2955.10', X: 'PARTIALLY_FILLED', l: '1.200', z: '1.200', T: 1767225604999 };
    const frame = (o: Record<string, unknown>) => JSON.stringify({ stream: '!forceOrder@arr', data: { e: 'forceOrder', E: 1767225605000, o } });
    expect(binanceFutures.parse(frame(order))).toEqual([
      { kind: 'liquidation', symbol: 'ETHUSDT', liquidationId: '1767225604999-BUY-1.200@2955.10', price: '2955.10', quantity: '1.200', positionSide: 'short', ts: 1767225604999 },
    ]);
    expect(binanceFutures.parse(frame({ ...order, ap: undefined }))).toEqual([{ kind: 'unknown' }]);
  });

  test('unknown streams, malformed trades and garbage are unknown, never thrown', () => {
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('markets: USDT and USDC perpetuals of catalog assets; 1000PEPE is not PEPE and is listed as unmapped', () => {
    const { markets, unmapped } = selectMarkets(binanceFutures, parseExchangeInfo(fixture('binance-futures', 'rest_exchange_info.json'), 'PERPETUAL'));
    expect(markets.map((m) => [m.symbol, m.asset, m.quote])).toEqual([
      ['BTCUSDT', 'bitcoin', 'USDT'],
      ['ETHUSDC', 'ethereum', 'USDC'],
    ]);
    expect(unmapped).toEqual(['1000PEPEUSDT']);
  });

  test('the market listing reads /fapi/v1/exchangeInfo and keeps trading perpetuals', async () => {
    const { io, asked } = cannedIo({ 'https://f/fapi/v1/exchangeInfo': fixture('binance-futures', 'rest_exchange_info.json') });
    expect(await binanceFutures.listMarkets(io, { ws: 'wss://f', rest: 'https://f' })).toEqual([
      { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', contractSize: '1' },
      { symbol: '1000PEPEUSDT', base: '1000PEPE', quote: 'USDT', contractSize: '1' },
      { symbol: 'ETHUSDC', base: 'ETH', quote: 'USDC', contractSize: '1' },
    ]);
    expect(asked).toEqual(['https://f/fapi/v1/exchangeInfo']);
  });

  test('depth on the /public route, trades and the all-market liquidation stream on /market', () => {
    const plans = binanceFutures.sockets({ ws: 'wss://f', rest: 'https://f' }, [btc]);
    expect(plans.map((p) => [p.url, p.subscribe.map((s) => JSON.parse(s).params)])).toEqual([
      ['wss://f/public/stream', [['btcusdt@depth@100ms']]],
      ['wss://f/market/stream', [['btcusdt@aggTrade', '!forceOrder@arr']]],
    ]);
  });
});

describe('binance-futures book sync', () => {
  test('the first diff straddles the snapshot, the next continues it by pu; a broken pu chain is a counted resync', () => {
    const updates = parseAll('ws_book_update.json') as BookMessage[];
    const snapshot = binanceFutures.book.restSnapshot!.parse(fixture('binance-futures', 'rest_book_snapshot.json'));
    const sync = new BookSync(binanceFutures.book, btc);
    expect(sync.onMessage(updates[0]!)).toBe('buffered');
    expect(sync.onRestSnapshot(snapshot)).toBe('synced');
    expect(sync.onMessage(updates[1]!)).toBe('applied');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 1.5]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.3, 1.25], [87000.5, 5]]);
    expect(sync.onMessage(updates[2]!)).toBe('gap');
    expect(sync.resyncs).toBe(1);
    expect(sync.synced).toBe(false);
    expect(sync.wantsRestSnapshot).toBe(true);
  });

  test('the sequence rule: older diffs are stale; the first one straddles the snapshot or starts right after it (pu); later ones continue by pu', () => {
    // The three diffs of ws_book_update.json: 198..201 (pu 197), 202..203 (pu 201), 206..208 (pu 205).
    const [first, second, third] = parseAll('ws_book_update.json') as BookMessage[];
    const sequence = binanceFutures.book.sequence!;
    const fresh = true;
    expect([
      sequence(200, first!, fresh), // straddles the snapshot
      sequence(201, first!, fresh), // ends at the snapshot: still the first to apply
      sequence(202, first!, fresh), // wholly older than the snapshot
      sequence(201, second!, fresh), // starts right after the snapshot: pu is the snapshot's id
      sequence(203, third!, fresh), // neither straddles nor continues
    ]).toEqual(['apply', 'apply', 'stale', 'apply', 'gap']);
    expect([
      sequence(201, second!, !fresh), // pu continues
      sequence(203, second!, !fresh), // already applied
      sequence(203, third!, !fresh), // pu 205 after 203
      sequence(200, first!, !fresh), // straddles, but after the first diff only pu counts
    ]).toEqual(['apply', 'stale', 'gap', 'gap']);
  });

  test('the REST snapshot is /fapi/v1/depth of 1000 levels', () => {
    expect(binanceFutures.book.restSnapshot!.url('https://f', 'BTCUSDT')).toBe('https://f/fapi/v1/depth?symbol=BTCUSDT&limit=1000');
  });
});

describe('binance-futures recorded session (cryptofeed, 2021-07-22, SUSHIUSDT and CTKUSDT depth@100ms and aggTrade of one connection, and their REST snapshots)', () => {
  const session = recordedSession('binance-futures');
  const raw = session.map((f) => ({ at: f.at, json: JSON.parse(f.text) as { stream: string; data: Record<string, unknown> } }));
  const parseSession = () => session.map((f) => binanceFutures.parse(f.text));
  const rest = fixture('binance-futures', 'rest_recorded_depth.json') as Record<string, RecordedRest>;
  const isTrade = (j: { data: Record<string, unknown> }) => j.data.e === 'aggTrade';

  test('518 frames: every diff a book message, every aggTrade a trade; ids unique per market; times in ms of the venue clock', () => {
    const parsed = parseSession();
    expect(countKinds(parsed.flat())).toEqual({ book: raw.filter(({ json }) => json.data.e === 'depthUpdate').length, trade: raw.filter(({ json }) => isTrade(json)).length });
    const ids = raw.filter(({ json }) => isTrade(json)).map(({ json }) => `${json.data.s}:${json.data.a}`);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { at, json } of raw) expect(Math.abs(at * 1000 - (json.data.E as number))).toBeLessThan(2_000);
  });

  test("taker side: against the book synced from REST and the diffs, 71 of 72 placeable trades are on the side `m` gives (m: the buyer was the maker)", () => {
    const parsed = parseSession();
    let placed = 0;
    let against = 0;
    for (const [symbol, snapshot] of Object.entries(rest)) {
      const market = { symbol, base: symbol, quote: 'USDT', asset: symbol, contractSize: '1' };
      const sync = new BookSync(binanceFutures.book, market);
      const updates = raw.flatMap(({ at, json }, i) => (json.data.s === symbol && !isTrade(json) ? [{ at, message: parsed[i]![0] as BookMessage }] : []));
      const outcome = replayWithRest(new BookSync(binanceFutures.book, market), binanceFutures.book, updates, snapshot);
      expect(outcome.snapshot).toBe('synced');
      expect(outcome.after.every((o) => o === 'applied' || o === 'stale')).toBe(true);
      // Again, in venue time (a diff at E, a trade at T, a trade before a diff of the same
      // millisecond), to read the book each trade met: the streams are batched apart, so in receive
      // order a diff may already hold what a trade took.
      const events = raw.flatMap(({ at, json }, i) => (json.data.s === symbol ? [{ at, i, time: (isTrade(json) ? json.data.T : json.data.E) as number, trade: isTrade(json) }] : []));
      events.sort((x, y) => x.time - y.time || Number(y.trade) - Number(x.trade));
      let loaded = false;
      for (const { at, i, trade } of events) {
        if (!loaded && at >= snapshot.at) loaded = sync.onRestSnapshot(binanceFutures.book.restSnapshot!.parse(snapshot.json)) === 'synced';
        if (!trade) {
          sync.onMessage(parsed[i]![0] as BookMessage);
          continue;
        }
        if (!loaded) continue;
        const json = raw[i]!.json;
        const side = placedSide(Number(json.data.p), sync.book.top('bid', 1)[0]![0], sync.book.top('ask', 1)[0]![0]);
        const ours = tradesOf(parsed[i]!)[0]!;
        if (side) placed += 1;
        if (side && side !== ours.side) against += 1;
        expect(ours.side).toBe(json.data.m ? 'sell' : 'buy');
      }
      expect(loaded).toBe(true);
      expect(sync.resyncs).toBe(0);
    }
    // 71 of the 72 trades that can be placed agree; one taker buy prints at a price the 100 ms diff
    // batch already shows as a bid (the level flipped within the batch).
    expect({ placed, against }).toEqual({ placed: 72, against: 1 });
  });
});

describe('binance-futures recorded frames (Tardis.dev samples): a forceOrder, an aggTrade of 2019', () => {
  const recorded = fixture('binance-futures', 'ws_recorded_tardis.json') as { data: { e: string; o?: { s: string; S: string; ap: string; z: string; T: number } } }[];

  test('the forced BUY closes a short, at the average price, the filled quantity; the 2019 aggTrade without `a` (the aggregate id) is unknown', () => {
    const parsed = frames('binance-futures', 'ws_recorded_tardis.json').map(binanceFutures.parse);
    const o = recorded[1]!.data.o!;
    expect(parsed[1]).toEqual([{ kind: 'liquidation', symbol: o.s, liquidationId: `${o.T}-${o.S}-${o.z}@${o.ap}`, price: o.ap, quantity: o.z, positionSide: 'short', ts: o.T }]);
    expect('a' in recorded[0]!.data).toBe(false);
    expect(parsed[0]).toEqual([{ kind: 'unknown' }]);
  });
});

describe('binance-futures trade history (aggTrades: the aggregate trades the collector reads)', () => {
  const rest = binanceFutures.history!.rest!;

  test('aggregate ids run consecutively per symbol over the whole recorded session', () => {
    expect(binanceFutures.history!.continuity).toBe('sequential');
    const trades = tradesOf(recordedSession('binance-futures').flatMap((f) => binanceFutures.parse(f.text)));
    // The first aggregate id of each symbol in the recording, and how many follow it without a hole.
    const runs = { SUSHIUSDT: [87353230, 40], CTKUSDT: [16599292, 38] } as const;
    for (const [symbol, [first, count]] of Object.entries(runs)) {
      expect(trades.filter((t) => t.symbol === symbol).map((t) => t.seq)).toEqual(Array.from({ length: count }, (_, i) => first + i));
    }
  });

  test('url: 1000 aggregate trades from the one after the cursor; a time cursor from its millisecond', () => {
    expect(rest.url('https://x', 'BTCUSDT', { ts: 1767225600128, seq: 2290311001 })).toBe('https://x/fapi/v1/aggTrades?symbol=BTCUSDT&fromId=2290311002&limit=1000');
    expect(rest.url('https://x', 'BTCUSDT', { ts: 1767225600128 })).toBe('https://x/fapi/v1/aggTrades?symbol=BTCUSDT&startTime=1767225600128&limit=1000');
  });

  test('parse: the documented page; a full page may have more; the two-day refusal and the rate refusal are no page', () => {
    expect(rest.parse(fixture('binance-futures', 'rest_agg_trades.json'), 'BTCUSDT')).toEqual({
      trades: [{ kind: 'trade', symbol: 'BTCUSDT', tradeId: '26129', seq: 26129, price: '0.01633102', quantity: '4.70443515', side: 'sell', ts: 1498793709153 }],
      more: false,
    });
    const full = Array.from({ length: 1_000 }, (_, i) => ({ a: 100 + i, p: '1.0', q: '2', f: 5_000 + i, l: 5_000 + i, T: 1_000 + i, m: false }));
    expect(rest.parse(full, 'BTCUSDT')).toMatchObject({ more: true, trades: { length: 1_000 } });
    expect(rest.parse(fixture('binance-futures', 'rest_search_window.json'), 'BTCUSDT')).toBeUndefined();
    expect(rest.parse(fixture('binance-futures', 'rest_rate_limited.json'), 'BTCUSDT')).toBeUndefined();
    // The two-day window measured live, not the year the page states; under the IP budget (20 of 2,400 a minute).
    expect(rest.reachMs).toBe(2 * 86_400_000);
    expect(rest.requestsPerSecond * 60 * 20).toBeLessThan(2_400);
  });

  test('a trade from a page is the event its aggTrade frame gives', () => {
    // The first frame of ws_trade.json as aggTrades writes it (REST rows carry no event envelope).
    const row = { a: 2290311001, p: '87010.10', q: '0.150', f: 5100200300, l: 5100200302, T: 1767225600128, m: true };
    const [fromRest] = rest.parse([row], 'BTCUSDT')!.trades;
    const [fromSocket] = tradesOf(parseAll('ws_trade.json'));
    expect(fromRest).toEqual(fromSocket);
    expect(toTradeEvent('binance-futures', btc, fromRest!, 3)).toEqual(toTradeEvent('binance-futures', btc, fromSocket!, 3));
  });
});

import { describe, expect, test } from 'vitest';
import { BookSync, ConnectionSequence } from '../bookSync.ts';
import { selectMarkets, statusEvents, toTradeEvent } from '../normalize.ts';
import { statusEvent } from '../../infra/events.ts';
import { catalogAssets } from '../../infra/catalog/catalog.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { coinbase, parseExchangeCurrencies, parseProducts } from '../venues/coinbase.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';

// Every parse runs inside a test: mutation testing activates a mutant only while tests run, so a
// frame parsed while the suite is collected would be parsed by the unmutated code.
const parseAll = (name: string) => frames('coinbase', name).flatMap(coinbase.parse);
const btc: VenueMarket = { symbol: 'BTC-USD', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' };
const withoutSequence = (messages: VenueMessage[]) => messages.filter((m) => m.kind !== 'sequence');

describe('coinbase messages', () => {
  test('trades: the venue writes the maker side (BUY is a taker sell), RFC 3339 times to ms, a batch newest first (sent on oldest first); the recent-trades snapshot is skipped', () => {
    expect(parseAll('ws_trade.json')).toEqual([
      { kind: 'sequence', value: 12 },
      { kind: 'trade', symbol: 'BTC-USD', tradeId: '771001', seq: 771001, price: '87012.4', quantity: '0.0152', side: 'buy', ts: 1767225600121 },
      { kind: 'trade', symbol: 'BTC-USD', tradeId: '771002', seq: 771002, price: '87012.5', quantity: '0.2', side: 'sell', ts: 1767225600125 },
      { kind: 'sequence', value: 13 },
    ]);
  });

  test('level2 arrives on l2_data as a snapshot then updates; bids and offers split', () => {
    expect(withoutSequence(parseAll('ws_book_snapshot.json'))).toEqual([
      {
        kind: 'book', symbol: 'BTC-USD', snapshot: true, ts: 1767225600100,
        bids: [['87000.10', '0.5'], ['86999.90', '1.25']], asks: [['87000.20', '0.75'], ['87000.50', '2']],
      },
    ]);
  });

  test('subscriptions, heartbeats, errors; unknown channels and malformed events', () => {
    expect(withoutSequence(parseAll('ws_control.json'))).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'heartbeat' },
      { kind: 'control', what: 'error', detail: 'Failed to subscribe: product NOPE-USD not found' },
    ]);
    expect(withoutSequence(parseAll('ws_unknown.json'))).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('an error without a message; JSON that is no message; a level2 event of the wrong shape keeps its sequence number', () => {
    expect(coinbase.parse('{"type":"error"}')).toEqual([{ kind: 'control', what: 'error', detail: 'error' }]);
    expect(coinbase.parse('null')).toEqual([{ kind: 'unknown' }]);
    // Hand-written: a channel message without timestamp and sequence_num.
    expect(coinbase.parse('{"channel":"l2_data","client_id":"","events":[]}')).toEqual([{ kind: 'unknown' }]);
    // Hand-written l2_data frame whose update names a side that is neither bid nor offer.
    const badSide = { channel: 'l2_data', client_id: '', timestamp: '2026-01-01T00:00:00.500000000Z', sequence_num: 8, events: [{ type: 'update', product_id: 'BTC-USD', updates: [{ side: 'ask', event_time: '2026-01-01T00:00:00.499000Z', price_level: '87000.40', new_quantity: '1' }] }] };
    expect(coinbase.parse(JSON.stringify(badSide))).toEqual([{ kind: 'sequence', value: 8 }, { kind: 'unknown' }]);
  });

  test('products: online spot products of catalog assets, with the base name where given (trimmed); an alias (BTC-USDC of BTC-USD) is the same book, left out', () => {
    const listed = parseProducts(fixture('coinbase', 'rest_products.json'));
    expect(listed).toEqual([
      { symbol: 'BTC-USD', base: 'BTC', quote: 'USD', contractSize: '1', baseName: 'Bitcoin' },
      { symbol: 'ETH-BTC', base: 'ETH', quote: 'BTC', contractSize: '1', baseName: 'Ethereum' },
      { symbol: 'SOL-USDT', base: 'SOL', quote: 'USDT', contractSize: '1' },
    ]);
    const { markets, unmapped } = selectMarkets(coinbase, listed);
    expect(markets.map((m) => m.symbol)).toEqual(['BTC-USD', 'SOL-USDT']);
    expect(unmapped).toEqual([]);
  });

  test('products recorded from the live venue: a spot product is named by its base_name as written there; the alias and the futures (base_name "") are left out', () => {
    // A whole GET /api/v3/brokerage/market/products answer (SOURCES.md): BTC-USDC is the alias of BTC-USD.
    expect(parseProducts(fixture('coinbase', 'rest_products_recorded.json'))).toEqual([
      { symbol: 'BTC-USD', base: 'BTC', quote: 'USD', contractSize: '1', baseName: 'Bitcoin' },
    ]);
    // Products as ccxt kept them from the venue, put back in the listing's envelope (SOURCES.md).
    const products = fixture('coinbase', 'rest_products_recorded_ccxt.json') as object[];
    expect(parseProducts({ products }).map((m) => [m.symbol, m.baseName])).toEqual([
      ['BTC-USDT', 'Bitcoin'],
      ['ETH-USDT', 'Ethereum'],
      ['ADA-USDT', 'Cardano'],
      ['XRP-USDT', 'XRP'],
      ['DOGE-USDT', 'Dogecoin'],
      ['BTC-USD', 'Bitcoin'],
    ]);
  });

  test('products: each condition leaves out on its own; a product without product_type counts as spot', () => {
    // Hand-written in the format of GET /api/v3/brokerage/market/products.
    const product = (product_id: string, fields: object) => ({ product_id, base_currency_id: 'BTC', quote_currency_id: 'USD', status: 'online', trading_disabled: false, product_type: 'SPOT', alias: '', ...fields });
    const products = [
      product('ONLINE-HALTED', { trading_disabled: true }),
      product('OFFLINE-OPEN', { status: 'offline' }),
      product('BTC-PERP-INTX', { product_type: 'FUTURE' }),
      product('UNTYPED-USD', { product_type: undefined }),
    ];
    expect(parseProducts({ products, num_products: 4 }).map((m) => m.symbol)).toEqual(['UNTYPED-USD']);
  });

  test('products: a blank base_name, or one longer than any name (100 characters), gives no name', () => {
    const product = (product_id: string, base_name: string) => ({ product_id, base_currency_id: 'X', quote_currency_id: 'USD', status: 'online', product_type: 'SPOT', base_name });
    const listed = parseProducts({ products: [product('A-USD', '   '), product('B-USD', 'b'.repeat(101)), product('C-USD', 'c'.repeat(100))] });
    expect(listed.map((m) => [m.symbol, m.baseName])).toEqual([
      ['A-USD', undefined],
      ['B-USD', undefined],
      ['C-USD', 'c'.repeat(100)],
    ]);
  });

  test("listMarkets asks the public spot products and the Exchange API's currency list, on the Exchange API's host in production", async () => {
    const url = 'https://c/api/v3/brokerage/market/products?product_type=SPOT';
    const { io, asked } = cannedIo({ [url]: fixture('coinbase', 'rest_products.json') });
    // Without an answer from /currencies the products are listed all the same, without contracts.
    const listed = await coinbase.listMarkets(io, { ws: 'wss://c', rest: 'https://c' });
    expect(listed.map((m) => m.symbol)).toContain('BTC-USD');
    expect(listed.filter((m) => m.baseContracts)).toEqual([]);
    expect(asked.sort()).toEqual([url, 'https://c/currencies']);
    const production = cannedIo({});
    await coinbase.listMarkets(production.io, coinbase.endpoints).catch(() => []);
    expect(production.asked.sort()).toEqual(['https://api.coinbase.com/api/v3/brokerage/market/products?product_type=SPOT', 'https://api.exchange.coinbase.com/currencies']);
  });

  test('one channel per subscribe message, heartbeats first', () => {
    const [plan] = coinbase.sockets({ ws: 'wss://c', rest: 'https://c' }, [btc]);
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([
      { type: 'subscribe', channel: 'heartbeats' },
      { type: 'subscribe', product_ids: ['BTC-USD'], channel: 'market_trades' },
      { type: 'subscribe', product_ids: ['BTC-USD'], channel: 'level2' },
    ]);
  });
});

describe('coinbase currencies: contracts', () => {
  test("currencies recorded from the live venue: contracts of the networks we map to CoinGecko platforms, none for a coin's own network, an empty address or an unmapped network; carried into the market's status", async () => {
    const currencies = fixture('coinbase', 'rest_currencies_recorded.json');
    // Read off the recording: USDT has one network, ethereum; USDC has seven, of which avacchain,
    // ethereum and solana give an address we map (arbitrum, base and optimism give "", polygon is not
    // mapped); ETH gives an address only on polygon; the rest are their own networks (null) or fiat.
    expect([...parseExchangeCurrencies(currencies)]).toEqual([
      ['USDT', { contracts: [{ platform: 'ethereum', address: '0xdac17f958d2ee523a2206206994597c13d831ec7' }] }],
      [
        'USDC',
        {
          contracts: [
            { platform: 'avalanche', address: '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E' },
            { platform: 'ethereum', address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
            { platform: 'solana', address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' },
          ],
        },
      ],
    ]);
    const products = fixture('coinbase', 'rest_products.json') as { products: Record<string, unknown>[] };
    const usdc = { ...products.products[0]!, product_id: 'USDC-USD', base_currency_id: 'USDC', base_name: 'USDC' };
    const { io } = cannedIo({ 'https://c/api/v3/brokerage/market/products?product_type=SPOT': { products: [...products.products, usdc] }, 'https://c/currencies': currencies });
    const listed = await coinbase.listMarkets(io, { ws: 'wss://c', rest: 'https://c' });
    expect(listed.map((m) => [m.symbol, m.baseName, m.baseContracts?.map((c) => c.platform)])).toEqual([
      ['BTC-USD', 'Bitcoin', undefined],
      ['ETH-BTC', 'Ethereum', undefined],
      ['SOL-USDT', undefined, undefined],
      ['USDC-USD', 'USDC', ['avalanche', 'ethereum', 'solana']],
    ]);
    const [status] = statusEvents('coinbase', [{ ...listed[3]!, asset: 'usd-coin' }], true, 5);
    expect(statusEvent.parse(status).baseContracts).toEqual([
      { platform: 'avalanche', address: '0xb97ef9ef8734c71904d8002f8b6bc66dd9c48a6e' },
      { platform: 'ethereum', address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
      { platform: 'solana', address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' },
    ]);
  });

  test("the mapped networks' recorded contracts are the catalog's for the same platforms", () => {
    const catalog = new Map(catalogAssets.map((a) => [a.id, a.platforms ?? {}]));
    const recorded = parseExchangeCurrencies(fixture('coinbase', 'rest_currencies_recorded.json'));
    for (const [code, id] of [['USDT', 'tether'], ['USDC', 'usd-coin']] as const) {
      for (const c of recorded.get(code)!.contracts!) expect(catalog.get(id)![c.platform]?.contract_address.toLowerCase(), `${code} on ${c.platform}`).toBe(c.address.toLowerCase());
    }
  });
});

/** A recorded frame, read without our parser. */
type RecordedFrame = {
  channel: string;
  sequence_num: number;
  events: {
    type?: string;
    updates?: { side: 'bid' | 'offer'; event_time: string; price_level: string; new_quantity: string }[];
    trades?: { trade_id: string; price: string; size: string; time: string; side: 'BUY' | 'SELL' }[];
  }[];
};

describe('coinbase recorded session (FastMM, 2026-09-30, BTC-USD level2 and market_trades of one connection)', () => {
  const recorded = fixture('coinbase', 'ws_recorded_session.json') as RecordedFrame[];
  const parseSession = () => frames('coinbase', 'ws_recorded_session.json').flatMap(coinbase.parse);
  const rawTrades = recorded.filter((f) => f.channel === 'market_trades').flatMap((f) => f.events.flatMap((e) => e.trades ?? []));
  const l2 = recorded.filter((f) => f.channel === 'l2_data').flatMap((f) => f.events.flatMap((e) => e.updates ?? []));

  /** RFC 3339 with up to nanoseconds, as microseconds since the epoch. */
  const micros = (t: string) => Date.parse(`${t.slice(0, 19)}Z`) * 1000 + Number((t.slice(20, -1) || '0').padEnd(6, '0').slice(0, 6));

  /** The book as of `time` (venue clock): every level change the engine made at or before it, applied in order. */
  function bookAt(time: string) {
    const levels = { bid: new Map<string, number>(), offer: new Map<string, number>() };
    for (const u of l2) {
      if (micros(u.event_time) > micros(time)) continue;
      if (Number(u.new_quantity) === 0) levels[u.side].delete(u.price_level);
      else levels[u.side].set(u.price_level, Number(u.new_quantity));
    }
    return levels;
  }

  test('every frame parses: 15 frames, a snapshot and 9 updates, 10 trades, no unknown', () => {
    const parsed = parseSession();
    const count = (kind: VenueMessage['kind']) => parsed.filter((m) => m.kind === kind).length;
    expect(recorded).toHaveLength(15);
    expect({ book: count('book'), trade: count('trade'), control: count('control'), unknown: count('unknown') }).toEqual({ book: 10, trade: 10, control: 3, unknown: 0 });
  });

  test("each taker buy prints at or above the best ask of that moment and consumes it; the venue's side is the maker's", () => {
    const trades = parseSession().filter((m): m is Extract<VenueMessage, { kind: 'trade' }> => m.kind === 'trade');
    expect(trades).toHaveLength(rawTrades.length);
    for (const raw of rawTrades) {
      const book = bookAt(raw.time);
      const bestAsk = Math.min(...[...book.offer.keys()].map(Number));
      const bestBid = Math.max(...[...book.bid.keys()].map(Number));
      // Placed against the book: at or above the ask the taker bought, at or below the bid it sold.
      const takerSide = Number(raw.price) >= bestAsk ? 'buy' : Number(raw.price) <= bestBid ? 'sell' : undefined;
      expect(takerSide).toBe('buy');
      expect(raw.side).toBe('SELL');
      expect(trades.find((t) => t.tradeId === raw.trade_id)).toMatchObject({ price: raw.price, quantity: raw.size, side: takerSide });
    }
    // What was bought at 83277.26 is what left the ask there: the maker's offer, not a bid.
    const atAsk = rawTrades.filter((t) => t.price === '83277.26' && micros(t.time) < micros('2026-09-30T02:39:54Z')).reduce((sum, t) => sum + Number(t.size), 0);
    expect(bookAt('2026-09-30T02:39:53.977543Z').offer.get('83277.26')! - bookAt('2026-09-30T02:39:54.000214Z').offer.get('83277.26')!).toBeCloseTo(atAsk, 12);
  });

  test('one taker order sweeping five ask levels: prices rise with the trade id, the whole of each level as the snapshot had it', () => {
    const sweep = rawTrades.filter((t) => t.time.startsWith('2026-09-30T02:39:54.18')).sort((a, b) => Number(a.trade_id) - Number(b.trade_id));
    const prices = sweep.map((t) => Number(t.price));
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
    const filled = new Map<string, number>();
    for (const t of sweep) filled.set(t.price, (filled.get(t.price) ?? 0) + Number(t.size));
    const before = bookAt('2026-09-30T02:39:54.183916Z').offer;
    for (const [price, size] of filled) expect(size).toBeCloseTo(before.get(price)!, 12);
    const ours = parseSession().filter((m) => m.kind === 'trade' && sweep.some((t) => t.trade_id === m.tradeId));
    expect(ours.map((m) => (m.kind === 'trade' ? m.side : undefined))).toEqual(sweep.map(() => 'buy'));
  });
});

describe('coinbase book sync', () => {
  const books = (messages: VenueMessage[]) => messages.filter((m): m is BookMessage => m.kind === 'book');
  const sequences = (messages: VenueMessage[]) => messages.flatMap((m) => (m.kind === 'sequence' ? [m.value] : []));

  test('updates as sent, each after its sequence number', () => {
    expect(parseAll('ws_book_update.json')).toEqual([
      { kind: 'sequence', value: 4 },
      { kind: 'book', symbol: 'BTC-USD', snapshot: false, ts: 1767225600200, bids: [['87000.10', '0']], asks: [['87000.30', '1.1']] },
      { kind: 'sequence', value: 7 },
      { kind: 'book', symbol: 'BTC-USD', snapshot: false, ts: 1767225600400, bids: [['87000.00', '0.3']], asks: [] },
    ]);
  });

  test('a jump in the connection sequence is a lost message: the books it may have changed are dropped and counted', () => {
    const snapshotFrames = parseAll('ws_book_snapshot.json');
    const updateFrames = parseAll('ws_book_update.json');
    const sync = new BookSync(coinbase.book, btc);
    const sequence = new ConnectionSequence();
    expect(sequence.observe(sequences(snapshotFrames)[0]!)).toBe('ok');
    expect(sync.onMessage(books(snapshotFrames)[0]!)).toBe('snapshot');
    const [four, seven] = sequences(updateFrames);
    expect(sequence.observe(four!)).toBe('ok');
    expect(sync.onMessage(books(updateFrames)[0]!)).toBe('applied');
    expect(sync.book.top('bid', 5)).toEqual([[86999.9, 1.25]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.2, 0.75], [87000.3, 1.1], [87000.5, 2]]);
    // 5 and 6 never arrived.
    expect(sequence.observe(seven!)).toBe('gap');
    sync.invalidate();
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
    expect(sync.onMessage(books(updateFrames)[1]!)).toBe('ignored');
    expect(coinbase.book.resubscribe!(['BTC-USD']).map((s) => JSON.parse(s))).toEqual([
      { type: 'unsubscribe', product_ids: ['BTC-USD'], channel: 'level2' },
      { type: 'subscribe', product_ids: ['BTC-USD'], channel: 'level2' },
    ]);
  });
});

describe('coinbase trade history (the Exchange API: pages of ids, newest first)', () => {
  const rest = coinbase.history!.rest!;
  const trades = () => parseAll('ws_recorded_session.json').filter((m): m is Extract<VenueMessage, { kind: 'trade' }> => m.kind === 'trade');

  test('trade ids run consecutively per product: the recorded trades of BTC-USD, 1100253488 to 1100253497, in the order they printed (the batch lists them newest first)', () => {
    expect(coinbase.history!.continuity).toBe('sequential');
    expect(trades().map((t) => t.seq!)).toEqual(Array.from({ length: 10 }, (_, i) => 1100253488 + i));
  });

  test("url: on the Exchange API's host, the 1000 ids after the cursor (newer than it, older than it + 1001); an overridden base serves it too", () => {
    expect(rest.url(coinbase.endpoints.rest, 'BTC-USD', { ts: 1, seq: 1100253488 })).toBe(
      'https://api.exchange.coinbase.com/products/BTC-USD/trades?limit=1000&before=1100253488&after=1100254489',
    );
    expect(rest.url('http://127.0.0.1:9', 'ETH-USD', { ts: 1 })).toBe('http://127.0.0.1:9/products/ETH-USD/trades?limit=1000');
  });

  test("parse: the documented page, the maker's side turned to the taker's; an empty page is the last; the refusal is no page", () => {
    expect(rest.parse(fixture('coinbase', 'rest_product_trades.json'), 'BTC-USD')).toEqual({
      trades: [{ kind: 'trade', symbol: 'BTC-USD', tradeId: '86327327', seq: 86327327, price: '6225.32000000', quantity: '0.06469797', side: 'buy', ts: 1584664619860 }],
      more: true,
    });
    expect(rest.parse([], 'BTC-USD')).toEqual({ trades: [], more: false });
    expect(rest.parse(fixture('coinbase', 'rest_rate_limited.json'), 'BTC-USD')).toBeUndefined();
    // Public endpoints: 10 requests a second per IP.
    expect(rest.requestsPerSecond).toBeLessThan(10);
    expect(rest.reachMs).toBeUndefined();
  });

  test('a trade from a page is the event of the same trade from market_trades', () => {
    // The recorded trade 1100253488 (maker SELL) as the Exchange API writes a trade: id a number, side lower case.
    const fromSocket = trades().find((t) => t.tradeId === '1100253488')!;
    const row = { time: '2026-09-30T02:39:53.977543Z', trade_id: 1100253488, price: fromSocket.price, size: fromSocket.quantity, side: 'sell' };
    const [fromRest] = rest.parse([row], 'BTC-USD')!.trades;
    expect(fromRest).toEqual(fromSocket);
    expect(toTradeEvent('coinbase', btc, fromRest!, 2)).toEqual(toTradeEvent('coinbase', btc, fromSocket, 2));
  });
});

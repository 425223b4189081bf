import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, statusEvents, toTradeEvent } from '../normalize.ts';
import { statusEvent } from '../../infra/events.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { kucoin, parseBullet, parseCurrencies, parseHistories, parseSymbols } from '../venues/kucoin.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, replayWithRest, tradesOf, type RecordedRest } from './recorded.ts';

// Every parse runs inside a test: mutation testing activates a mutant only while tests run, so a
// frame parsed while the suite is collected would be parsed by the unmutated code.
const parseAll = (name: string) => frames('kucoin', name).flatMap(kucoin.parse);
const btc: VenueMarket = { symbol: 'BTC-USDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
const endpoints = { ws: 'wss://k', rest: 'https://k' };

describe('kucoin messages', () => {
  test('matches: taker side as sent; time in nanoseconds cut to ms', () => {
    const parsed = parseAll('ws_trade.json');
    expect(parsed).toEqual([
      { kind: 'trade', symbol: 'BTC-USDT', tradeId: '11067996711960577', price: '87012.4', quantity: '0.0152', side: 'sell', ts: 1767225600121 },
      { kind: 'trade', symbol: 'BTC-USDT', tradeId: '11067996711960578', price: '87012.5', quantity: '0.2', side: 'buy', ts: 1767225600125 },
    ]);
    expect(toTradeEvent('kucoin', btc, parsed[0] as Extract<VenueMessage, { kind: 'trade' }>, 9)).toMatchObject({ market: 'BTC-USDT', asset: 'bitcoin', quantity: 0.0152, price: 87012.4 });
  });

  test('welcome, acks, pongs and refusals; unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'pong' },
      { kind: 'control', what: 'error', detail: '404: topic /market/match:NOPE-USDT is not found' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('a refusal whose data is not text is written out as JSON', () => {
    // Hand-written in the shape of the documented error frame (id, type, code, data), with an object as data.
    const refusal = { id: '1545910660741', type: 'error', code: 400, data: { topic: '/market/match:NOPE-USDT' } };
    expect(kucoin.parse(JSON.stringify(refusal))).toEqual([{ kind: 'control', what: 'error', detail: '400: {"topic":"/market/match:NOPE-USDT"}' }]);
  });

  test('frames are told apart by type and topic, not by the shape of their data', () => {
    const match = { symbol: 'BTC-USDT', side: 'sell', price: '87012.4', size: '0.0152', tradeId: '11067996711960577', time: '1767225600121456789' };
    const change = { symbol: 'BTC-USDT', sequenceStart: 14103844, sequenceEnd: 14103844, changes: { asks: [['87000.3', '0.9', '14103844']], bids: [] } };
    // Hand-written: a type we do not know, a data message without a topic, data under a topic we do not parse.
    const others = [
      { type: 'notice', topic: '/market/match:BTC-USDT', subject: 'trade.l3match', data: match },
      { type: 'message', subject: 'trade.l3match', data: match },
      { type: 'message', topic: '/market/ticker:BTC-USDT', subject: 'trade.ticker', data: change },
    ];
    expect(others.map((o) => kucoin.parse(JSON.stringify(o)))).toEqual([[{ kind: 'unknown' }], [{ kind: 'unknown' }], [{ kind: 'unknown' }]]);
  });

  test('a level2 change without its sequence number is unknown, never thrown', () => {
    // Hand-written in the format of "Level2 - Market Data": each change is [price, size, sequence].
    const unnumbered = { symbol: 'BTC-USDT', sequenceStart: 14103844, sequenceEnd: 14103844, time: 1767225600100, changes: { asks: [['87000.3', '0.9']], bids: [] } };
    expect(kucoin.parse(JSON.stringify({ type: 'message', topic: '/market/level2:BTC-USDT', subject: 'trade.l2update', data: unnumbered }))).toEqual([{ kind: 'unknown' }]);
  });

  test('symbols: trading symbols of catalog assets with a followed quote', () => {
    const { markets, unmapped } = selectMarkets(kucoin, parseSymbols(fixture('kucoin', 'rest_symbols.json')));
    expect(markets.map((m) => [m.symbol, m.base, m.quote, m.asset, m.contractSize])).toEqual([
      ['BTC-USDT', 'BTC', 'USDT', 'bitcoin', '1'],
      ['SOL-USDC', 'SOL', 'USDC', 'solana', '1'],
    ]);
    expect(unmapped).toEqual(['NEWCOIN-USDT']);
  });

  test('REST: symbols from /api/v1/symbols with their bases\' full names from /api/v3/currencies, the book snapshot of a symbol from level2_100', async () => {
    const { io, asked } = cannedIo({ 'https://k/api/v1/symbols': fixture('kucoin', 'rest_symbols.json'), 'https://k/api/v3/currencies': fixture('kucoin', 'rest_currencies.json') });
    const listed = await kucoin.listMarkets(io, endpoints);
    expect(listed.map((m) => [m.symbol, m.baseName])).toEqual([
      ['BTC-USDT', 'Bitcoin'],
      ['SOL-USDC', 'Solana'],
      ['ETH-BTC', undefined],
      ['NEWCOIN-USDT', undefined],
    ]);
    expect(asked.sort()).toEqual(['https://k/api/v1/symbols', 'https://k/api/v3/currencies']);
    // Without an answer from /api/v3/currencies the markets are listed all the same, unnamed.
    const unnamed = cannedIo({ 'https://k/api/v1/symbols': fixture('kucoin', 'rest_symbols.json') });
    expect((await kucoin.listMarkets(unnamed.io, endpoints)).map((m) => [m.symbol, m.baseName])).toEqual(listed.map((m) => [m.symbol, undefined]));
    expect(kucoin.book.restSnapshot!.url('https://k', 'BTC-USDT')).toBe('https://k/api/v1/market/orderbook/level2_100?symbol=BTC-USDT');
  });

  test('currencies recorded from the live venue: a symbol is named by its base currency\'s fullName as written there; a base the list lacks gets none', async () => {
    // Entries of GET /api/v3/currencies as ccxt kept them from the venue, put back in the answer's envelope (SOURCES.md).
    const currencies = { code: '200000', data: fixture('kucoin', 'rest_currencies_recorded.json') };
    expect([...parseCurrencies(currencies)].flatMap(([code, c]) => (c.name ? [[code, c.name]] : []))).toEqual([
      ['BTC', 'Bitcoin'],
      ['USDT', 'Tether'],
      ['EUR', 'Euro'],
      ['INR', 'Indian Rupee'],
      ['USD', 'US Dollar'],
      ['KRW', 'Won'],
      ['LTC', 'Litecoin'],
      ['ETH', 'Ethereum'],
      ['ADA', 'Cardano'],
      ['XRP', 'XRP'],
    ]);
    const { io } = cannedIo({ 'https://k/api/v1/symbols': fixture('kucoin', 'rest_symbols.json'), 'https://k/api/v3/currencies': currencies });
    expect((await kucoin.listMarkets(io, endpoints)).map((m) => [m.symbol, m.baseName])).toEqual([
      ['BTC-USDT', 'Bitcoin'],
      ['SOL-USDC', undefined],
      ['ETH-BTC', 'Ethereum'],
      ['NEWCOIN-USDT', undefined],
    ]);
  });

  test('each connection asks bullet-public for its endpoint first', async () => {
    const posted: string[] = [];
    const { io } = cannedIo({});
    const bulletIo = {
      ...io,
      postJson: async (url: string) => {
        posted.push(url);
        return fixture('kucoin', 'rest_bullet_public.json');
      },
    };
    const [plan] = kucoin.sockets(endpoints, [btc]);
    const resolved = await plan!.connectUrl!(bulletIo);
    expect(posted).toEqual(['https://k/api/v1/bullet-public']);
    expect(resolved.url.startsWith('wss://ws-api-spot.kucoin.com/?token=')).toBe(true);
    expect(resolved.pingEveryMs).toBe(18_000);
  });

  test('bullet-public: the instance server with the token and a fresh connectId, and its ping interval', () => {
    const json = fixture('kucoin', 'rest_bullet_public.json') as { data: { token: string } };
    const a = parseBullet(json);
    const b = parseBullet(json);
    const url = new URL(a.url);
    expect(`${url.origin}${url.pathname}`).toBe('wss://ws-api-spot.kucoin.com/');
    expect(url.searchParams.get('token')).toBe(json.data.token);
    expect(url.searchParams.get('connectId')).not.toBe(new URL(b.url).searchParams.get('connectId'));
    expect(a.pingEveryMs).toBe(18_000);
    expect(() => parseBullet({ code: '400003', msg: 'KC-API-KEY not exists' })).toThrow();
  });

  test('subscriptions: trades and book per list of symbols, at most 100 a request', () => {
    const markets = Array.from({ length: 150 }, (_, i) => ({ ...btc, symbol: `C${i}-USDT` }));
    const plans = kucoin.sockets({ ws: 'wss://k', rest: 'https://k' }, markets);
    expect(plans.map((p) => p.symbols.length)).toEqual([100, 50]);
    const requests = plans[1]!.subscribe.map((s) => JSON.parse(s));
    expect(requests.map((r) => [r.type, r.topic.split(':')[0], r.topic.split(':')[1].split(',').length, r.response])).toEqual([
      ['subscribe', '/market/match', 50, true],
      ['subscribe', '/market/level2', 50, true],
    ]);
    expect(plans[0]!.connectUrl).toBeTypeOf('function');
  });

  test('subscriptions name the symbols, public topics, answered with an ack', () => {
    const sol = { ...btc, symbol: 'SOL-USDC', base: 'SOL', quote: 'USDC', asset: 'solana' };
    const [plan] = kucoin.sockets(endpoints, [btc, sol]);
    expect(plan!.symbols).toEqual(['BTC-USDT', 'SOL-USDC']);
    expect(plan!.subscribe.map((s) => ({ ...JSON.parse(s), id: 'any' }))).toEqual([
      { id: 'any', type: 'subscribe', topic: '/market/match:BTC-USDT,SOL-USDC', privateChannel: false, response: true },
      { id: 'any', type: 'subscribe', topic: '/market/level2:BTC-USDT,SOL-USDC', privateChannel: false, response: true },
    ]);
  });
});

describe('kucoin book sync (REST snapshot + numbered changes)', () => {
  const snapshot = () => kucoin.book.restSnapshot!.parse(fixture('kucoin', 'rest_orderbook_level2_100.json'));
  const updates = () => parseAll('ws_book_update.json') as BookMessage[];
  /** The changes of the fixture's n-th frame (its sequenceStart..sequenceEnd). */
  const ranges = [[14103844, 14103847], [14103848, 14103849], [14103853, 14103854]] as const;
  const frame = (n: number) => updates().filter((u) => u.firstId! >= ranges[n]![0] && u.firstId! <= ranges[n]![1]);

  test('one book message per change, in number order', () => {
    expect(updates().map((u) => [u.firstId, u.lastId, u.bids.length + u.asks.length])).toEqual([
      [14103844, 14103844, 1],
      [14103845, 14103845, 1],
      [14103846, 14103846, 1],
      [14103847, 14103847, 1],
      [14103848, 14103848, 1],
      [14103849, 14103849, 1],
      [14103853, 14103853, 1],
      [14103854, 14103854, 1],
    ]);
    expect(updates()[0]).toEqual({ kind: 'book', symbol: 'BTC-USDT', snapshot: false, bids: [], asks: [['87000.3', '0.9']], firstId: 14103844, lastId: 14103844, ts: 1767225600100 });
  });

  test('the sequence rule: changes the book holds are stale, the next number applies, any other is a gap', () => {
    const sequence = kucoin.book.sequence!;
    const change = (id: number): BookMessage => ({ kind: 'book', symbol: 'BTC-USDT', snapshot: false, bids: [], asks: [], firstId: id, lastId: id });
    expect([99, 100, 101, 102].map((id) => sequence(100, change(id), false))).toEqual(['stale', 'stale', 'apply', 'gap']);
  });

  test('changes buffered, the snapshot loaded, the changes it holds dropped, the rest applied', () => {
    const sync = new BookSync(kucoin.book, btc);
    for (const u of [...frame(0), ...frame(1)]) expect(sync.onMessage(u)).toBe('buffered');
    expect(sync.wantsRestSnapshot).toBe(true);
    expect(sync.onRestSnapshot(snapshot())).toBe('synced');
    // 14103844 and 14103845 are older than the snapshot (0.9 and 0.4 are not applied).
    expect(sync.book.top('bid', 5)).toEqual([[87000.1, 0.7], [87000, 0.5], [86999.9, 1.25]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.3, 0.8], [87000.4, 1.1], [87001, 0.0035]]);
  });

  test('a skipped number is a counted resync; the change that showed it starts the next buffer', () => {
    const sync = new BookSync(kucoin.book, btc);
    for (const u of [...frame(0), ...frame(1)]) sync.onMessage(u);
    sync.onRestSnapshot(snapshot());
    expect(sync.onMessage(frame(2)[0]!)).toBe('gap');
    expect(sync).toMatchObject({ resyncs: 1, synced: false, wantsRestSnapshot: true });
    expect(sync.onMessage(frame(2)[1]!)).toBe('buffered');
    expect(sync.onRestSnapshot({ lastId: 14103853, bids: [['86999.9', '2']], asks: [['87001', '1']] })).toBe('synced');
    expect(sync.book.top('ask', 5)).toEqual([]);
    expect(sync.book.top('bid', 5)).toEqual([[86999.9, 2]]);
  });
});

describe('kucoin recorded session (cryptofeed, 2021-04-25, DAPPT-BTC level2 and match of one connection, and its REST snapshot)', () => {
  const session = recordedSession('kucoin');
  const raw = session.map((f) => JSON.parse(f.text) as { type: string; topic?: string; data?: { tradeId?: string; time?: string; changes?: { bids: string[][]; asks: string[][] } } });
  const rest = (fixture('kucoin', 'rest_recorded_depth.json') as Record<string, RecordedRest>)['DAPPT-BTC']!;

  test('every frame parses: one book message per change, trades with unique ids, times in ns to ms', () => {
    const parsed = session.map((f) => kucoin.parse(f.text));
    const changes = raw.reduce((n, j) => n + (j.topic?.startsWith('/market/level2') ? j.data!.changes!.bids.length + j.data!.changes!.asks.length : 0), 0);
    const matches = raw.filter((j) => j.topic?.startsWith('/market/match'));
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': raw.filter((j) => j.type === 'welcome' || j.type === 'ack').length, book: changes, trade: matches.length });
    const trades = tradesOf(parsed.flat());
    expect(new Set(trades.map((t) => t.tradeId)).size).toBe(trades.length);
    // The 2021 level2 frames carry no `time`: their book messages have no ts at all (the collector
    // then uses the receive time), not an undefined one.
    const books = parsed.flat().filter((m) => m.kind === 'book');
    expect(books[0]).toStrictEqual({ kind: 'book', symbol: 'DAPPT-BTC', snapshot: false, bids: [['0.0000001115', '0']], asks: [], firstId: 1612701563860, lastId: 1612701563860 });
    expect(books.filter((m) => 'ts' in m)).toEqual([]);
    session.forEach((f, i) => {
      if (!raw[i]!.topic?.startsWith('/market/match')) return;
      expect(Math.abs(f.at * 1000 - Number(raw[i]!.data!.time!.slice(0, -6)))).toBeLessThan(2_000);
    });
  });

  test('the book syncs on the REST snapshot (v3 full depth) and every later change continues it', () => {
    const market = { symbol: 'DAPPT-BTC', base: 'DAPPT', quote: 'BTC', asset: 'dapp-token', contractSize: '1' };
    const sync = new BookSync(kucoin.book, market);
    const parsed = session.map((f) => kucoin.parse(f.text));
    const updates = session.flatMap((f, i) => parsed[i]!.filter((m): m is BookMessage => m.kind === 'book').map((message) => ({ at: f.at, message })));
    const outcome = replayWithRest(sync, kucoin.book, updates, rest);
    expect(outcome.snapshot).toBe('synced');
    expect(outcome.after.every((o) => o === 'applied' || o === 'stale')).toBe(true);
    expect(sync.resyncs).toBe(0);
  });
});

describe('kucoin trade history (REST market/histories: the last 100 trades only)', () => {
  const rest = () => kucoin.history!.rest!;

  test('continuity by time; the latest 100 trades, the same request whatever the cursor', () => {
    expect(kucoin.history).toMatchObject({ continuity: 'time', rest: { latestOnly: 100 } });
    expect(rest().reachMs).toBeUndefined();
    const url = 'https://api.kucoin.com/api/v1/market/histories?symbol=BTC-USDT';
    expect(rest().url('https://api.kucoin.com', 'BTC-USDT', { ts: 1548848575203, tradeId: '1548764654235' })).toBe(url);
    expect(rest().url('https://api.kucoin.com', 'BTC-USDT', { ts: 0 })).toBe(url);
  });

  test('a recorded answer: sequence the id, side the taker, the nanosecond number cut to its millisecond; nothing more', () => {
    expect(rest().parse(fixture('kucoin', 'rest_recorded_histories.json'), 'ETH-BTC')).toEqual({
      trades: [{ kind: 'trade', symbol: 'ETH-BTC', tradeId: '1548764654235', price: '0.03202', quantity: '0.6841354', side: 'sell', ts: 1548848575203 }],
      more: false,
    });
  });

  test('nanoseconds sent as a JSON number lose digits to double precision: whole milliseconds still come out whole, as the string would give them', () => {
    const row = (time: number | string) => ({ code: '200000', data: [{ sequence: '1', price: '1', size: '1', side: 'buy', time }] });
    const tsOf = (time: number | string) => parseHistories(row(time), 'BTC-USDT')!.trades[0]!.ts;
    for (let ms = 1_767_225_600_000; ms < 1_767_225_600_000 + 5_000; ms += 7) {
      // The number as JSON carries it: the double nearest ms x 1e6, which may lie just below it.
      const sent = JSON.parse(JSON.stringify(ms * 1_000_000)) as number;
      expect(tsOf(sent)).toBe(ms);
      expect(tsOf(`${ms}000000`)).toBe(ms);
    }
    expect(tsOf(1545904567062140823)).toBe(1545904567062);
  });

  test('a REST trade is the websocket match of the same trade: one id (sequence = tradeId), price, base quantity, side and time', () => {
    const [live] = parseAll('ws_trade.json');
    const match = (fixture('kucoin', 'ws_trade.json') as { data: { sequence: string; price: string; size: string; side: string; time: string } }[])[0]!.data;
    const [fromRest] = parseHistories({ code: '200000', data: [{ sequence: match.sequence, price: match.price, size: match.size, side: match.side, time: Number(match.time) }] }, 'BTC-USDT')!.trades;
    expect(toTradeEvent('kucoin', btc, fromRest!, 1)).toEqual(toTradeEvent('kucoin', btc, live as NonNullable<typeof fromRest>, 1));
  });

  test('the refusal past the rate limit, and a row without its sequence, are not understood', () => {
    expect(parseHistories(fixture('kucoin', 'rest_recorded_rate_limited.json'), 'BTC-USDT')).toBeUndefined();
    expect(parseHistories({ code: '200000', data: [{ price: '1', size: '1', side: 'buy', time: 1 }] }, 'BTC-USDT')).toBeUndefined();
  });
});

describe('kucoin currencies: contracts', () => {
  test("currencies recorded from the live venue: contracts of the chains we map to CoinGecko platforms, none for a native coin's empty address or an unmapped chain; carried into the market's status", async () => {
    const currencies = { code: '200000', data: fixture('kucoin', 'rest_currencies_recorded.json') };
    // Read off the recording: USDT's 12 chains hold 6 we map (sol, bsc, optimism, eth, trx, arbitrum;
    // kavaevm, eos, kcc, near, algo and xtz are not mapped); ETH's bsc and trx contracts (its eth,
    // optimism and arbitrum addresses are "": native there; heco and kcc not mapped); BTC's only
    // contract is on kcc; fiat has "chains": null; LTC, ADA and XRP only their own chains with "".
    const contracts = new Map([...parseCurrencies(currencies)].flatMap(([code, c]) => (c.contracts ? [[code, c.contracts] as const] : [])));
    expect([...contracts]).toEqual([
      [
        'USDT',
        [
          { platform: 'solana', address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB' },
          { platform: 'binance-smart-chain', address: '0x55d398326f99059ff775485246999027b3197955' },
          { platform: 'optimistic-ethereum', address: '0x94b008aa00579c1307b0ef2c499ad98a8ce58e58' },
          { platform: 'ethereum', address: '0xdac17f958d2ee523a2206206994597c13d831ec7' },
          { platform: 'tron', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
          { platform: 'arbitrum-one', address: '0xfd086bc7cd5c481dcc9c85ebe478a1c0b69fcbb9' },
        ],
      ],
      [
        'ETH',
        [
          { platform: 'binance-smart-chain', address: '0x2170ed0880ac9a755fd29b2688956bd959f933f8' },
          { platform: 'tron', address: 'THb4CqiFdwNHsWsQCs4JhzwjMWys4aqCbF' },
        ],
      ],
    ]);
    const { io } = cannedIo({ 'https://k/api/v1/symbols': fixture('kucoin', 'rest_symbols.json'), 'https://k/api/v3/currencies': currencies });
    const listed = await kucoin.listMarkets(io, endpoints);
    expect(listed.map((m) => [m.symbol, m.baseContracts?.map((c) => c.platform)])).toEqual([
      ['BTC-USDT', undefined],
      ['SOL-USDC', undefined],
      ['ETH-BTC', ['binance-smart-chain', 'tron']],
      ['NEWCOIN-USDT', undefined],
    ]);
    const [status] = statusEvents('kucoin', [{ ...listed[2]!, asset: 'ethereum' }], true, 5);
    expect(statusEvent.parse(status).baseContracts).toEqual([
      { platform: 'binance-smart-chain', address: '0x2170ed0880ac9a755fd29b2688956bd959f933f8' },
      { platform: 'tron', address: 'THb4CqiFdwNHsWsQCs4JhzwjMWys4aqCbF' },
    ]);
  });

  test('currencies: a listed mixed-case EVM address is lower-cased, a Tron one kept; a malformed chain list costs the contracts, not the name', async () => {
    // Hand-written in the recorded entries' shape.
    const entry = (currency: string, chains: unknown) => ({ currency, name: currency, fullName: `${currency} Token`, chains });
    const currencies = {
      code: '200000',
      data: [
        entry('MIX', [
          { chainName: 'ERC20', chainId: 'eth', contractAddress: '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01' },
          { chainName: 'TRC20', chainId: 'trx', contractAddress: 'TXyzAbC123' },
          { chainName: 'BEP20', chainId: 'bsc', contractAddress: null },
        ]),
        entry('BAD', 'not a list'),
      ],
    };
    const symbol = (base: string) => ({ symbol: `${base}-USDT`, baseCurrency: base, quoteCurrency: 'USDT', enableTrading: true });
    const { io } = cannedIo({ 'https://k/api/v1/symbols': { code: '200000', data: [symbol('MIX'), symbol('BAD')] }, 'https://k/api/v3/currencies': currencies });
    expect((await kucoin.listMarkets(io, endpoints)).map((m) => [m.symbol, m.baseName, m.baseContracts])).toEqual([
      [
        'MIX-USDT',
        'MIX Token',
        [
          { platform: 'ethereum', address: '0xabcdef0123456789abcdef0123456789abcdef01' },
          { platform: 'tron', address: 'TXyzAbC123' },
        ],
      ],
      ['BAD-USDT', 'BAD Token', undefined],
    ]);
  });
});

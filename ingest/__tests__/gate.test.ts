import { afterEach, describe, expect, test, vi } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, statusEvents, toTradeEvent } from '../normalize.ts';
import { contracted, type BookMessage, type VenueMarket, type VenueMessage } from '../venue.ts';
import { gate, parseCurrencies, parsePairs } from '../venues/gate.ts';
import { findAsset } from '../../infra/catalog/catalog.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, tradesOf } from './recorded.ts';

// Every parse runs inside a test: mutation testing activates a mutant only while tests run, so a
// frame parsed while the suite is collected would be parsed by the unmutated code.
const parseAll = (name: string) => frames('gate', name).flatMap(gate.parse);
const btc: VenueMarket = { symbol: 'BTC_USDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
/** A server push in the envelope of Gate's spot websocket v4 docs ("Server Response"). */
const push = (channel: string, event: string | undefined, result: unknown, error?: unknown) => JSON.stringify({ time: 1767225600, time_ms: 1767225600131, channel, event, result, error });

afterEach(() => void vi.useRealTimers());

describe('gate messages', () => {
  test('trades: taker side as sent; create_time_ms (ms with a fraction) cut to ms', () => {
    const parsed = parseAll('ws_trade.json');
    expect(parsed).toEqual([
      { kind: 'trade', symbol: 'BTC_USDT', tradeId: '9321584411', price: '87012.4', quantity: '0.0152', side: 'sell', ts: 1767225600121 },
      { kind: 'trade', symbol: 'BTC_USDT', tradeId: '9321584412', price: '87012.5', quantity: '0.2', side: 'buy', ts: 1767225600125 },
    ]);
    expect(toTradeEvent('gate', btc, parsed[0] as Extract<VenueMessage, { kind: 'trade' }>, 9)).toMatchObject({ market: 'BTC_USDT', asset: 'bitcoin', quote: 'USDT', quantity: 0.0152, price: 87012.4 });
  });

  test('subscription replies, refusals and pongs; unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'error', detail: '2: unknown currency pair NOPE_USDT' },
      { kind: 'control', what: 'pong' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('replies as the docs write them: `error: null` on success, unsubscribe answered like subscribe', () => {
    const success = { status: 'success' };
    expect(gate.parse(push('spot.trades', 'subscribe', success, null))).toEqual([{ kind: 'control', what: 'ack' }]);
    expect(gate.parse(push('spot.obu', 'unsubscribe', success, null))).toEqual([{ kind: 'control', what: 'ack' }]);
  });

  test('only updates of spot.trades and spot.obu are data; a result of the wrong shape is unknown', () => {
    const trade = { id: 9321584413, create_time: 1767225600, create_time_ms: '1767225600130.5', side: 'buy', currency_pair: 'BTC_USDT', amount: '0.1', price: '87012.6' };
    const book = { t: 1767225600100, full: true, s: 'ob.BTC_USDT.50', u: 28606981, b: [['87000.1', '0.5']], a: [] };
    // Hand-written: an event other than update ("all" is what the legacy order_book channel pushes),
    // book data on another channel, a trade without its time, a book whose stream name is no `ob.` name.
    const others = [
      push('spot.trades', 'all', trade),
      push('spot.order_book_update', 'update', book),
      push('spot.trades', 'update', { ...trade, create_time_ms: undefined }),
      push('spot.obu', 'update', { ...book, s: 'BTC_USDT' }),
    ];
    expect(others.map(gate.parse)).toEqual(Array(4).fill([{ kind: 'unknown' }]));
  });

  test('pairs: tradable pairs of catalog assets with a followed quote', () => {
    const { markets, unmapped } = selectMarkets(gate, parsePairs(fixture('gate', 'rest_currency_pairs.json')));
    expect(markets.map((m) => [m.symbol, m.base, m.quote, m.asset, m.contractSize])).toEqual([
      ['BTC_USDT', 'BTC', 'USDT', 'bitcoin', '1'],
      ['SOL_USDC', 'SOL', 'USDC', 'solana', '1'],
    ]);
    expect(unmapped).toEqual(['NEWCOIN_USDT']);
  });

  test("pairs: the base's name from base_name, carried into the market's connection status", () => {
    const listed = parsePairs(fixture('gate', 'rest_currency_pairs.json'));
    expect(listed.map((m) => [m.symbol, m.baseName])).toEqual([
      ['BTC_USDT', 'Bitcoin'],
      ['ETH_BTC', 'Ethereum'],
      ['SOL_USDC', 'Solana'],
      ['NEWCOIN_USDT', 'New coin'],
    ]);
    const { markets } = selectMarkets(gate, listed);
    expect(statusEvents('gate', markets, true, 5).map((e) => [e.market, e.baseName])).toEqual([
      ['BTC_USDT', 'Bitcoin'],
      ['SOL_USDC', 'Solana'],
    ]);
  });

  test('listMarkets asks /api/v4/spot/currency_pairs, and /api/v4/spot/currencies for the bases\' contracts', async () => {
    // The recorded currency list has USDT only: a pair with USDT as its base gets its contracts.
    const pairs = [...(fixture('gate', 'rest_currency_pairs.json') as object[]), { id: 'USDT_USD', base: 'USDT', base_name: 'Tether', quote: 'USD', trade_status: 'tradable' }];
    const { io, asked } = cannedIo({ 'https://g/api/v4/spot/currency_pairs': pairs, 'https://g/api/v4/spot/currencies': fixture('gate', 'rest_currencies_recorded.json') });
    const listed = await gate.listMarkets(io, { ws: 'wss://g', rest: 'https://g' });
    expect(asked.sort()).toEqual(['https://g/api/v4/spot/currencies', 'https://g/api/v4/spot/currency_pairs']);
    expect(listed.map((m) => [m.symbol, m.baseName, m.baseContracts?.length ?? 0])).toEqual([
      ['BTC_USDT', 'Bitcoin', 0],
      ['ETH_BTC', 'Ethereum', 0],
      ['SOL_USDC', 'Solana', 0],
      ['NEWCOIN_USDT', 'New coin', 0],
      ['USDT_USD', 'Tether', 3],
    ]);
    // Without an answer from /api/v4/spot/currencies the pairs are listed all the same, without contracts.
    const bare = cannedIo({ 'https://g/api/v4/spot/currency_pairs': pairs });
    expect((await gate.listMarkets(bare.io, { ws: 'wss://g', rest: 'https://g' })).map((m) => [m.symbol, m.baseName, m.baseContracts])).toEqual(listed.map((m) => [m.symbol, m.baseName, undefined]));
  });

  test("currencies recorded from the live venue: each mapped chain's addr is the base's contract on its platform, EVM addresses in lower case", () => {
    const usdt = parseCurrencies(fixture('gate', 'rest_currencies_recorded.json')).get('USDT');
    expect(usdt?.contracts).toEqual([
      { platform: 'ethereum', address: '0xdAC17F958D2ee523a2206206994597C13D831ec7' },
      { platform: 'arbitrum-one', address: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9' },
      { platform: 'binance-smart-chain', address: '0x55d398326f99059fF775485246999027B3197955' },
    ]);
    // The listing keeps them as chains compare them; on ethereum and binance-smart-chain they are the catalog's tether contracts.
    const [listing] = [{ symbol: 'USDT_USD', base: 'USDT', quote: 'USD', contractSize: '1', ...contracted(usdt!.contracts) }];
    const tether = findAsset('tether')!.platforms;
    for (const platform of ['ethereum', 'binance-smart-chain']) {
      expect(listing.baseContracts!.find((c) => c.platform === platform)!.address).toBe(tether[platform]!.contract_address.toLowerCase());
    }
    // The earlier form, one entry per currency and chain without addresses, gives no contracts; a chain we do not map is skipped.
    expect(parseCurrencies(fixture('gate', 'rest_currencies_recorded_per_chain.json')).size).toBe(0);
    expect(parseCurrencies([{ currency: 'FOO', chains: [{ name: 'HT', addr: '0x1111111111111111111111111111111111111111' }, { name: 'ETH', addr: '' }] }]).size).toBe(0);
  });

  test('subscriptions: trades in lists, one request per book stream, each stamped with the time of the (re)connect', () => {
    vi.useFakeTimers({ now: 1_767_225_600_000 });
    const [plan] = gate.sockets({ ws: 'wss://g', rest: 'https://g' }, [btc, { ...btc, symbol: 'ETH_USDT' }]);
    expect(plan!.url).toBe('wss://g/ws/v4/');
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([
      { time: 1_767_225_600, channel: 'spot.trades', event: 'subscribe', payload: ['BTC_USDT', 'ETH_USDT'] },
      { time: 1_767_225_600, channel: 'spot.obu', event: 'subscribe', payload: ['ob.BTC_USDT.50'] },
      { time: 1_767_225_600, channel: 'spot.obu', event: 'subscribe', payload: ['ob.ETH_USDT.50'] },
    ]);
    // A reconnect an hour later sends requests of that hour.
    vi.setSystemTime(1_767_229_200_000);
    expect(plan!.subscribe.map((s) => JSON.parse(s).time)).toEqual([1_767_229_200, 1_767_229_200, 1_767_229_200]);
  });
});

describe('gate book sync (spot.obu: U must follow the last u)', () => {
  const bookFrames = () => {
    const [snapshot] = parseAll('ws_book_snapshot.json') as BookMessage[];
    const [update, gap] = parseAll('ws_book_update.json') as BookMessage[];
    return { snapshot, update, gap };
  };

  test('levels as sent; a side left out of an update has no changes', () => {
    const { snapshot, update } = bookFrames();
    expect(snapshot).toEqual({
      kind: 'book', symbol: 'BTC_USDT', snapshot: true, lastId: 28606981, ts: 1767225600100,
      bids: [['87000.1', '0.5'], ['86999.9', '1.25'], ['86999', '0.001']],
      asks: [['87000.2', '0.75'], ['87000.5', '2'], ['87001', '0.0035']],
    });
    expect(update).toEqual({ kind: 'book', symbol: 'BTC_USDT', snapshot: false, firstId: 28606982, lastId: 28606984, ts: 1767225600250, bids: [['87000.1', '0'], ['87000', '0.3']], asks: [['87000.3', '1.1']] });
    // Hand-written update in the spot.obu format with no `b`: only asks changed.
    const asksOnly = { t: 1767225600300, s: 'ob.BTC_USDT.50', U: 28606985, u: 28606985, a: [['87000.4', '0.2']] };
    expect(gate.parse(push('spot.obu', 'update', asksOnly))).toEqual([{ kind: 'book', symbol: 'BTC_USDT', snapshot: false, firstId: 28606985, lastId: 28606985, ts: 1767225600300, bids: [], asks: [['87000.4', '0.2']] }]);
  });

  test('the sequence rule: updates the book holds are stale, one starting at the last u + 1 applies, any other is a gap', () => {
    const sequence = gate.book.sequence!;
    const update = (firstId: number, lastId: number): BookMessage => ({ kind: 'book', symbol: 'BTC_USDT', snapshot: false, bids: [], asks: [], firstId, lastId });
    expect([update(95, 99), update(96, 100), update(101, 103), update(102, 103)].map((u) => sequence(100, u, false))).toEqual(['stale', 'stale', 'apply', 'gap']);
  });

  test('a full book, then an update that continues it', () => {
    const { snapshot, update } = bookFrames();
    expect(snapshot).toMatchObject({ symbol: 'BTC_USDT', snapshot: true, lastId: 28606981, ts: 1767225600100 });
    const sync = new BookSync(gate.book, btc);
    expect(sync.onMessage(update!)).toBe('ignored');
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.onMessage(update!)).toBe('applied');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 0.3], [86999.9, 1.25], [86999, 0.001]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.2, 0.75], [87000.3, 1.1], [87000.5, 2], [87001, 0.0035]]);
    // Delivered again, an update the book already holds changes nothing.
    expect(sync.onMessage(update!)).toBe('stale');
  });

  test('an update that does not start at the last u + 1 is a counted resync, answered by unsubscribe + subscribe', () => {
    const { snapshot, update, gap } = bookFrames();
    const sync = new BookSync(gate.book, btc);
    sync.onMessage(snapshot!);
    sync.onMessage(update!);
    expect(sync.onMessage(gap!)).toBe('gap');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
    expect(sync.onMessage(gap!)).toBe('ignored');
    expect(gate.book.resubscribe!(['BTC_USDT']).map((s) => [JSON.parse(s).event, JSON.parse(s).payload])).toEqual([
      ['unsubscribe', ['ob.BTC_USDT.50']],
      ['subscribe', ['ob.BTC_USDT.50']],
    ]);
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.synced).toBe(true);
  });
});

describe('gate recorded frames: spot.trades of a cryptofeed session (2021-04-22), spot.obu from Tardis.dev samples (2025-08-01)', () => {
  const session = recordedSession('gate');
  const obu = fixture('gate', 'ws_recorded_tardis.json') as { channel: string; result: { id?: number; full?: boolean; U?: number; u?: number; t?: number; create_time_ms?: string } }[];

  test('every frame parses; trade ids unique; create_time_ms in ms, within 2 s before receipt', () => {
    const raw = session.map((f) => JSON.parse(f.text) as { event: string; result: { id: number; create_time_ms: string } });
    const parsed = session.map((f) => gate.parse(f.text));
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': raw.filter((j) => j.event === 'subscribe').length, trade: raw.filter((j) => j.event === 'update').length });
    const trades = tradesOf(parsed.flat());
    expect(new Set(trades.map((t) => t.tradeId)).size).toBe(trades.length);
    session.forEach((f, i) => {
      if (raw[i]!.event !== 'update') return;
      expect(f.at * 1000 - Number(raw[i]!.result.create_time_ms)).toBeGreaterThan(-50);
      expect(f.at * 1000 - Number(raw[i]!.result.create_time_ms)).toBeLessThan(2_000);
    });
  });

  test('spot.obu: the full book and an update as sent, U..u carried', () => {
    const parsed = frames('gate', 'ws_recorded_tardis.json').map(gate.parse);
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': 1, trade: 1, book: 2 });
    expect(parsed[2]).toEqual([expect.objectContaining({ symbol: 'BTC_USDT', snapshot: true, lastId: obu[2]!.result.u, ts: obu[2]!.result.t })]);
    expect(parsed[3]).toEqual([expect.objectContaining({ snapshot: false, firstId: obu[3]!.result.U, lastId: obu[3]!.result.u })]);
  });
});

describe('gate trade history (spot/trades after a trade id)', () => {
  const rest = gate.history!.rest!;

  test('live trade ids are exchange-wide, not consecutive per pair (the recorded NEO_BTC trades): gaps are found by time, trades carry no number', () => {
    expect(gate.history!.continuity).toBe('time');
    const neo = tradesOf(recordedSession('gate').flatMap((f) => gate.parse(f.text))).filter((t) => t.symbol === 'NEO_BTC');
    expect(neo.map((t) => Number(t.tradeId))).toEqual([816995970, 816995982, 816996982, 816996983, 816997068]);
    expect(neo.every((t) => t.seq === undefined)).toBe(true);
  });

  test("url: the 1000 trades after the cursor's trade id; a cursor without one asks from its second", () => {
    expect(rest.url('https://x', 'BTC_USDT', { ts: 1767225600121, tradeId: '9321584411' })).toBe(
      'https://x/api/v4/spot/trades?currency_pair=BTC_USDT&limit=1000&last_id=9321584411&reverse=false',
    );
    expect(rest.url('https://x', 'BTC_USDT', { ts: 1767225600121 })).toBe('https://x/api/v4/spot/trades?currency_pair=BTC_USDT&limit=1000&from=1767225600');
  });

  test('parse: a recorded row, time cut to ms; a full page may have more; the refusal is no page', () => {
    expect(rest.parse(fixture('gate', 'rest_spot_trades.json'), 'ADA_USDT')).toEqual({
      trades: [{ kind: 'trade', symbol: 'ADA_USDT', tradeId: '1852958144', price: '2.104', quantity: '307.078', side: 'sell', ts: 1634673259378 }],
      more: false,
    });
    const [row] = fixture('gate', 'rest_spot_trades.json') as Record<string, unknown>[];
    const full = Array.from({ length: 1_000 }, (_, i) => ({ ...row, id: String(1852958144 + i) }));
    expect(rest.parse(full, 'ADA_USDT')).toMatchObject({ more: true, trades: { length: 1_000 } });
    expect(rest.parse(fixture('gate', 'rest_rate_limited.json'), 'ADA_USDT')).toBeUndefined();
    // 30 days by default; 200 requests per 10 s per endpoint.
    expect(rest.reachMs).toBe(30 * 86_400_000);
    expect(rest.requestsPerSecond).toBeLessThan(20);
  });

  test('a trade from a page is the event of the same trade from spot.trades (the id a string there, a number here)', () => {
    const [fromSocket] = tradesOf(parseAll('ws_trade.json'));
    const row = { id: '9321584411', create_time: '1767225600', create_time_ms: '1767225600121.4578', currency_pair: 'BTC_USDT', side: 'sell', amount: '0.0152', price: '87012.4' };
    const [fromRest] = rest.parse([row], 'BTC_USDT')!.trades;
    expect(fromRest).toEqual(fromSocket);
    expect(toTradeEvent('gate', btc, fromRest!, 9)).toEqual(toTradeEvent('gate', btc, fromSocket!, 9));
  });
});

import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { bitstamp, parsePairs, parseTransactions } from '../venues/bitstamp.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, tradesOf } from './recorded.ts';

// Every parse runs inside a test: mutation testing activates a mutant only while tests run, so a
// frame parsed while the suite is collected would be parsed by the unmutated code.
const parseAll = (name: string) => frames('bitstamp', name).flatMap(bitstamp.parse);
const btc: VenueMarket = { symbol: 'btcusd', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' };

describe('bitstamp messages', () => {
  test('trades: type 0 is a taker buy, 1 a taker sell; the *_str decimals; microsecond times to ms', () => {
    const parsed = parseAll('ws_trade.json');
    expect(parsed).toEqual([
      { kind: 'trade', symbol: 'btcusd', tradeId: '402118211', price: '87012.4', quantity: '0.01520000', side: 'sell', ts: 1767225600121 },
      { kind: 'trade', symbol: 'btcusd', tradeId: '402118212', price: '87012.5', quantity: '0.20000000', side: 'buy', ts: 1767225600125 },
    ]);
    expect(toTradeEvent('bitstamp', btc, parsed[0] as Extract<VenueMessage, { kind: 'trade' }>, 7)).toMatchObject({
      market: 'btcusd',
      asset: 'bitcoin',
      quote: 'USD',
      price: 87012.4,
      quantity: 0.0152,
      side: 'sell',
      ts: 1767225600121,
      receivedAt: 7,
    });
  });

  test('acks, the heartbeat answer, a reconnect request and errors; unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'pong' },
      { kind: 'control', what: 'reconnect', detail: 'bts:request_reconnect' },
      { kind: 'control', what: 'error', detail: 'Incorrect JSON format.' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('an unsubscribe is acked; an error without a message says `error`; a trade without its channel is unknown', () => {
    // Hand-written in the envelope of the websocket v2 docs ({ event, channel, data }).
    const controls = [
      { event: 'bts:unsubscription_succeeded', channel: 'live_trades_btcusd', data: {} },
      { event: 'bts:error', channel: '', data: { code: null } },
      { event: 'bts:error', channel: '', data: 'Bad request' },
    ];
    expect(controls.map((c) => bitstamp.parse(JSON.stringify(c)))).toEqual([
      [{ kind: 'control', what: 'ack' }],
      [{ kind: 'control', what: 'error', detail: 'error' }],
      [{ kind: 'control', what: 'error', detail: 'error' }],
    ]);
    const trade = { id: 402118213, amount_str: '0.01520000', price_str: '87012.4', type: 1, microtimestamp: '1767225600121456' };
    expect(bitstamp.parse(JSON.stringify({ event: 'trade', data: trade }))).toEqual([{ kind: 'unknown' }]);
  });

  test('pairs: enabled pairs of catalog assets with a followed quote; the channel symbol is url_symbol', () => {
    const { markets, unmapped } = selectMarkets(bitstamp, parsePairs(fixture('bitstamp', 'rest_trading_pairs_info.json')));
    expect(markets.map((m) => [m.symbol, m.base, m.quote, m.asset, m.contractSize])).toEqual([
      ['btcusd', 'BTC', 'USD', 'bitcoin', '1'],
      ['xrpusdt', 'XRP', 'USDT', 'ripple', '1'],
    ]);
    expect(unmapped).toEqual(['newcoinusd']);
  });

  test('pairs: a name that is not BASE/QUOTE gives no market', () => {
    // Hand-written in the format of /api/v2/trading-pairs-info/.
    expect(parsePairs([{ name: 'BTCUSD', url_symbol: 'btcusd', trading: 'Enabled' }])).toEqual([]);
  });

  test('listMarkets asks /api/v2/trading-pairs-info/', async () => {
    const { io, asked } = cannedIo({ 'https://b/api/v2/trading-pairs-info/': fixture('bitstamp', 'rest_trading_pairs_info.json') });
    expect((await bitstamp.listMarkets(io, { ws: 'wss://b', rest: 'https://b' })).map((m) => m.symbol)).toContain('btcusd');
    expect(asked).toEqual(['https://b/api/v2/trading-pairs-info/']);
  });

  test('subscriptions: one message per channel, at most 1,000 channels per connection', () => {
    const many = Array.from({ length: 501 }, (_, i): VenueMarket => ({ ...btc, symbol: `p${i}usd` }));
    const plans = bitstamp.sockets({ ws: 'wss://b', rest: 'https://b' }, many);
    expect(plans.map((p) => [p.url, p.symbols.length, p.subscribe.length])).toEqual([
      ['wss://b', 500, 1_000],
      ['wss://b', 1, 2],
    ]);
    expect(plans[1]!.symbols).toEqual(['p500usd']);
    expect(plans[1]!.subscribe.map((s) => JSON.parse(s))).toEqual([
      { event: 'bts:subscribe', data: { channel: 'live_trades_p500usd' } },
      { event: 'bts:subscribe', data: { channel: 'order_book_p500usd' } },
    ]);
  });
});

describe('bitstamp books (whole top-100 books, no sequence)', () => {
  test('each message is the whole book at the venue time of its change', () => {
    const [first, second, third] = parseAll('ws_book.json') as BookMessage[];
    expect(first).toEqual({
      kind: 'book',
      symbol: 'btcusd',
      snapshot: true,
      ts: 1767225600100,
      bids: [['87000.1', '0.50000000'], ['86999.9', '1.25000000'], ['86999.0', '0.00100000']],
      asks: [['87000.2', '0.75000000'], ['87000.5', '2.00000000'], ['87001.0', '0.00350000']],
    });
    expect([second!.ts, third!.ts]).toEqual([1767225600250, 1767225600450]);
  });

  test('a `data` event is a book only on order_book_*, and only with its microtimestamp', () => {
    // Hand-written (websocket v2 docs): the diff and detail book channels send `data` events too.
    const undated = { timestamp: '1767225600', bids: [['87000.1', '0.50000000']], asks: [['87000.2', '0.75000000']] };
    const others = [
      { event: 'data', channel: 'diff_order_book_btcusd', data: { ...undated, microtimestamp: '1767225600100000' } },
      { event: 'data', channel: 'order_book_btcusd', data: undated },
    ];
    expect(others.map((o) => bitstamp.parse(JSON.stringify(o)))).toEqual([[{ kind: 'unknown' }], [{ kind: 'unknown' }]]);
  });

  test('a lost message leaves no trace: the next book replaces everything, and nothing is resynced', () => {
    const [first, , third] = parseAll('ws_book.json') as BookMessage[];
    const sync = new BookSync(bitstamp.book, btc);
    expect(sync.onMessage(first!)).toBe('snapshot');
    // The second book never arrived.
    expect(sync.onMessage(third!)).toBe('snapshot');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 0.3], [86999.9, 1.25]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.3, 1.1], [87000.5, 1.5]]);
    expect(sync).toMatchObject({ resyncs: 0, synced: true });
  });

  test('the book keeps the channel depth of 100 levels per side', () => {
    const sync = new BookSync(bitstamp.book, btc);
    const deep: BookMessage = { kind: 'book', symbol: 'btcusd', snapshot: true, bids: Array.from({ length: 120 }, (_, i) => [String(80_000 - i), '1']), asks: [['90000', '1']] };
    sync.onMessage(deep);
    expect(sync.book.size('bid')).toBe(100);
  });
});

describe('bitstamp recorded frames: live_trades of a cryptofeed session (2022-01-05) and Tardis.dev samples (2019)', () => {
  test('every frame parses: type 0 a taker buy; microtimestamp to ms, within 2 s before receipt; ids unique', () => {
    const session = recordedSession('bitstamp');
    const raw = session.map((f) => JSON.parse(f.text) as { event: string; data: { id?: number; type?: number; microtimestamp?: string } });
    const parsed = session.map((f) => bitstamp.parse(f.text));
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': raw.filter((j) => j.event === 'bts:subscription_succeeded').length, trade: raw.filter((j) => j.event === 'trade').length });
    session.forEach((f, i) => {
      const d = raw[i]!.data;
      if (raw[i]!.event !== 'trade') return;
      expect(parsed[i]).toEqual([expect.objectContaining({ tradeId: String(d.id), side: d.type === 0 ? 'buy' : 'sell', ts: Math.floor(Number(d.microtimestamp) / 1000) })]);
      expect(f.at * 1000 - Number(d.microtimestamp) / 1000).toBeLessThan(2_000);
      // The recorder's clock ran up to ~70 ms behind the venue's.
      expect(f.at * 1000 - Number(d.microtimestamp) / 1000).toBeGreaterThan(-500);
    });
    const trades = tradesOf(parsed.flat());
    expect(new Set(trades.map((t) => t.tradeId)).size).toBe(trades.length);
    expect(countKinds(frames('bitstamp', 'ws_recorded_tardis.json').flatMap(bitstamp.parse))).toEqual({ 'control:ack': 1, trade: 2 });
  });
});

describe('bitstamp trade history (REST transactions: the last 24 hours, one page)', () => {
  const rest = () => bitstamp.history!.rest!;

  test('continuity by time; reaches 24 h back, always asking the whole day, whatever the cursor', () => {
    expect(bitstamp.history).toMatchObject({ continuity: 'time', rest: { reachMs: 24 * 3_600_000 } });
    expect(rest().latestOnly).toBeUndefined();
    const day = 'https://www.bitstamp.net/api/v2/transactions/btcusd/?time=day';
    expect(rest().url('https://www.bitstamp.net', 'btcusd', { ts: 1_551_814_435_000, tradeId: '83581898' })).toBe(day);
    expect(rest().url('https://www.bitstamp.net', 'btcusd', { ts: 0 })).toBe(day);
  });

  test('a recorded answer (newest first): tid the id, type 1 a taker sell, date in whole seconds; one page, nothing more', () => {
    expect(rest().parse(fixture('bitstamp', 'rest_recorded_transactions.json'), 'ethbtc')).toEqual({
      trades: [
        { kind: 'trade', symbol: 'ethbtc', tradeId: '83581898', price: '0.03532850', quantity: '0.85945907', side: 'sell', ts: 1551814435000 },
        { kind: 'trade', symbol: 'ethbtc', tradeId: '83581896', price: '0.03532851', quantity: '11.34130961', side: 'sell', ts: 1551814434000 },
      ],
      more: false,
    });
    // Type 0 is a taker buy; numbers where the venue writes strings are read the same.
    expect(parseTransactions([{ date: 1551814435, tid: 83581899, price: '0.0353', type: 0, amount: '1' }], 'ethbtc')?.trades).toEqual([
      { kind: 'trade', symbol: 'ethbtc', tradeId: '83581899', price: '0.0353', quantity: '1', side: 'buy', ts: 1551814435000 },
    ]);
  });

  test('the REST trade is the websocket trade to the second: same id, price, quantity and side, the time cut to its second', () => {
    const [live] = parseAll('ws_trade.json');
    const t = live as Extract<VenueMessage, { kind: 'trade' }>;
    // The same trade as transactions writes it.
    const [fromRest] = parseTransactions([{ date: String(Math.floor(t.ts / 1_000)), tid: t.tradeId, price: t.price, type: '1', amount: t.quantity }], 'btcusd')!.trades;
    const rest = toTradeEvent('bitstamp', btc, fromRest!, 1)!;
    const ws = toTradeEvent('bitstamp', btc, t, 1)!;
    expect({ ...rest, ts: 0 }).toEqual({ ...ws, ts: 0 });
    expect(rest.ts).toBe(Math.floor(ws.ts / 1_000) * 1_000);
    expect(rest.ts).not.toBe(ws.ts);
  });

  test('a body that is no list of transactions, or a row without its id, is not understood', () => {
    expect(parseTransactions({ response_code: '400.002', response_explanation: 'Request rejected due to exceeded rate limit.' }, 'btcusd')).toBeUndefined();
    expect(parseTransactions([{ date: '1551814435', price: '1', type: '0', amount: '1' }], 'btcusd')).toBeUndefined();
    expect(parseTransactions([{ date: '1551814435', tid: '1', price: '1', type: '2', amount: '1' }], 'btcusd')).toBeUndefined();
  });
});

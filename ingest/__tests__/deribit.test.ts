import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { deribit, parseInstruments } from '../venues/deribit.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, tradesOf } from './recorded.ts';

// Every parse runs inside a test: mutation testing activates a mutant only while tests run, so a
// frame parsed while the suite is collected would be parsed by the unmutated code.
const parseAll = (name: string) => frames('deribit', name).flatMap(deribit.parse);
const listed = () => selectMarkets(deribit, parseInstruments(fixture('deribit', 'rest_instruments.json')));
const btc: VenueMarket = { symbol: 'BTC_USDC-PERPETUAL', base: 'BTC', quote: 'USDC', asset: 'bitcoin', contractSize: '1' };
const eth: VenueMarket = { symbol: 'ETH_USDC-PERPETUAL', base: 'ETH', quote: 'USDC', asset: 'ethereum', contractSize: '1' };
/** A `public/subscribe` notification as the venue sends it (docs.deribit.com, "Notifications"). */
const notification = (channel: string, data: unknown) => JSON.stringify({ jsonrpc: '2.0', method: 'subscription', params: { channel, data } });

describe('deribit messages', () => {
  test('trades: `direction` is the taker side; linear perpetual amounts are base coins', () => {
    const parsed = parseAll('ws_trade.json');
    expect(parsed).toEqual([
      { kind: 'trade', symbol: 'BTC_USDC-PERPETUAL', tradeId: 'USDC-2436803', seq: 501899, price: '87012.4', quantity: '0.049', side: 'sell', ts: 1767225600121 },
      { kind: 'trade', symbol: 'BTC_USDC-PERPETUAL', tradeId: 'USDC-2436804', seq: 501900, price: '87012.5', quantity: '0.2', side: 'buy', ts: 1767225600125 },
    ]);
    expect(toTradeEvent('deribit', btc, parsed[0] as Extract<VenueMessage, { kind: 'trade' }>, 5)).toMatchObject({ asset: 'bitcoin', quote: 'USDC', quantity: 0.049, price: 87012.4 });
  });

  test('liquidations: a flagged trade is also a liquidation of its taker (T), its maker (M) or both (MT)', () => {
    const liquidations = parseAll('ws_liquidation.json').filter((m) => m.kind === 'liquidation');
    // A taker that sold while being liquidated was long; a maker that sold into a taker buy was long too.
    expect(liquidations.map((l) => l.kind === 'liquidation' && [l.liquidationId, l.positionSide, l.quantity, l.price, l.ts])).toEqual([
      ['USDC-2437001-T', 'long', '1.5', '2950.1', 1767225601000],
      ['USDC-2437002-M', 'long', '0.3', '2952.4', 1767225601004],
      ['USDC-2437003-T', 'short', '0.25', '2952.5', 1767225601009],
      ['USDC-2437003-M', 'long', '0.25', '2952.5', 1767225601009],
    ]);
    expect(parseAll('ws_liquidation.json').filter((m) => m.kind === 'trade')).toHaveLength(3);
    expect(toLiquidationEvent('deribit', eth, liquidations[0] as Extract<VenueMessage, { kind: 'liquidation' }>, 6)).toMatchObject({ quantity: 1.5, price: 2950.1, positionSide: 'long' });
  });

  test('liquidations: a maker liquidated by a taker sell was short (its forced buy closed the short)', () => {
    // Hand-written in the format of "trades.{instrument_name}.{interval}": no fixture has a sell flagged M.
    const sold = { trade_seq: 88124, trade_id: 'USDC-2437004', timestamp: 1767225601020, tick_direction: 2, price: 2949.9, instrument_name: 'ETH_USDC-PERPETUAL', direction: 'sell', amount: 0.4, liquidation: 'M' };
    expect(deribit.parse(notification('trades.ETH_USDC-PERPETUAL.100ms', [sold]))).toEqual([
      { kind: 'trade', symbol: 'ETH_USDC-PERPETUAL', tradeId: 'USDC-2437004', seq: 88124, price: '2949.9', quantity: '0.4', side: 'sell', ts: 1767225601020 },
      { kind: 'liquidation', symbol: 'ETH_USDC-PERPETUAL', liquidationId: 'USDC-2437004-M', price: '2949.9', quantity: '0.4', positionSide: 'short', ts: 1767225601020 },
    ]);
  });

  test('subscription answers, public/test answers (our pings), errors and heartbeats; unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'pong' },
      { kind: 'control', what: 'error', detail: '-32602: Invalid params' },
      { kind: 'control', what: 'heartbeat' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('answers we do not act on, and JSON that is no message, are unknown', () => {
    const answers = [
      // public/set_heartbeat and public/disable_heartbeat answer "ok" (their docs pages); we send neither.
      { jsonrpc: '2.0', id: 3, result: 'ok' },
      { jsonrpc: '2.0', id: 4, result: null },
      { jsonrpc: '2.0', id: 5, result: { channels: 2 } },
      // An error that is not the JSON-RPC { code, message } object.
      { jsonrpc: '2.0', id: 6, error: 'Invalid params' },
    ];
    expect([...answers.map((a) => JSON.stringify(a)), 'null', '[]'].map(deribit.parse)).toEqual(Array(6).fill([{ kind: 'unknown' }]));
  });

  test('frames are told apart by channel: book-shaped data on a channel other than book.* is unknown', () => {
    const data = { type: 'snapshot', timestamp: 1767225600100, instrument_name: 'BTC_USDC-PERPETUAL', change_id: 1550694837, bids: [['new', 87000.1, 0.5]], asks: [] };
    expect(deribit.parse(notification('ticker.BTC_USDC-PERPETUAL.100ms', data))).toEqual([{ kind: 'unknown' }]);
    expect(deribit.parse(notification('book.BTC_USDC-PERPETUAL.100ms', data))).toMatchObject([{ kind: 'book', snapshot: true }]);
  });

  test('instruments: active perpetuals, linear (base amounts) and inverse (USD amounts); dated futures left out', () => {
    // The dated BTC_USDC-27MAR26 and the inactive XRP_USDC-PERPETUAL give no listing at all.
    expect(parseInstruments(fixture('deribit', 'rest_instruments.json'))).toEqual([
      { symbol: 'BTC-PERPETUAL', base: 'BTC', quote: 'USD', contractSize: '1', inverse: true },
      { symbol: 'BTC_USDC-PERPETUAL', base: 'BTC', quote: 'USDC', contractSize: '1' },
      { symbol: 'ETH_USDC-PERPETUAL', base: 'ETH', quote: 'USDC', contractSize: '1' },
      { symbol: 'NEWCOIN_USDC-PERPETUAL', base: 'NEWCOIN', quote: 'USDC', contractSize: '1' },
    ]);
    const { markets, unmapped } = listed();
    expect(markets.map((m) => [m.symbol, m.base, m.quote, m.contractSize, m.asset, m.inverse ?? false])).toEqual([
      ['BTC-PERPETUAL', 'BTC', 'USD', '1', 'bitcoin', true],
      ['BTC_USDC-PERPETUAL', 'BTC', 'USDC', '1', 'bitcoin', false],
      ['ETH_USDC-PERPETUAL', 'ETH', 'USDC', '1', 'ethereum', false],
    ]);
    expect(unmapped).toEqual(['NEWCOIN_USDC-PERPETUAL']);
  });

  test('instruments: a perpetual settled in neither its base nor its counter currency is left out', () => {
    // Hand-written in the format of public/get_instruments: amounts of such a contract are in neither coin we convert.
    const instrument = { instrument_name: 'BTC_USDT-PERPETUAL', kind: 'future', is_active: true, settlement_period: 'perpetual', base_currency: 'BTC', counter_currency: 'USDT', settlement_currency: 'USDC' };
    expect(parseInstruments({ jsonrpc: '2.0', result: [instrument] })).toEqual([]);
  });

  test('instruments: only futures, even when another kind names a perpetual settlement', () => {
    // Hand-written in the format of public/get_instruments (kinds: future, option, spot, future_combo,
    // option_combo): a combo of perpetuals is not a market we read.
    const combo = { instrument_name: 'BTC-FS-PERP', kind: 'future_combo', is_active: true, settlement_period: 'perpetual', base_currency: 'BTC', counter_currency: 'USD', settlement_currency: 'BTC' };
    expect(parseInstruments({ jsonrpc: '2.0', result: [combo] })).toEqual([]);
  });

  test('listMarkets asks get_instruments for the futures of every currency', async () => {
    const url = 'https://d/api/v2/public/get_instruments?currency=any&kind=future';
    const { io, asked } = cannedIo({ [url]: fixture('deribit', 'rest_instruments.json') });
    expect((await deribit.listMarkets(io, { ws: 'wss://d', rest: 'https://d' })).map((m) => m.symbol)).toContain('BTC_USDC-PERPETUAL');
    expect(asked).toEqual([url]);
  });

  test('inverse BTC-PERPETUAL: a trade of 2500 USD at 87012.5 is 2500 / 87012.5 BTC', () => {
    const inverse = listed().markets.find((m) => m.symbol === 'BTC-PERPETUAL')!;
    const frame = { jsonrpc: '2.0', method: 'subscription', params: { channel: 'trades.BTC-PERPETUAL.100ms', data: [{ trade_id: '371000001', trade_seq: 1, timestamp: 1767225600121, price: 87012.5, amount: 2500, direction: 'buy', tick_direction: 0, index_price: 87011, mark_price: 87012, instrument_name: 'BTC-PERPETUAL' }] } };
    const [t] = deribit.parse(JSON.stringify(frame));
    expect(toTradeEvent('deribit', inverse, t as Extract<VenueMessage, { kind: 'trade' }>, 0)).toMatchObject({ market: 'BTC-PERPETUAL', quote: 'USD', price: 87012.5, quantity: 2500 / 87012.5 });
  });

  test('subscriptions: JSON-RPC public/subscribe with the public 100 ms channels', () => {
    const [plan] = deribit.sockets({ ws: 'wss://d', rest: 'https://d' }, [btc]);
    expect(plan!.url).toBe('wss://d/ws/api/v2');
    expect(plan!.symbols).toEqual(['BTC_USDC-PERPETUAL']);
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'public/subscribe', params: { channels: ['trades.BTC_USDC-PERPETUAL.100ms', 'book.BTC_USDC-PERPETUAL.100ms'] } },
    ]);
  });
});

describe('deribit book sync (prev_change_id must be the last change_id)', () => {
  const bookFrames = () => {
    const [snapshot] = parseAll('ws_book_snapshot.json') as BookMessage[];
    const [change, gap] = parseAll('ws_book_update.json') as BookMessage[];
    return { snapshot, change, gap };
  };

  test('levels as sent: a deletion is a zero amount, whatever amount it carries', () => {
    const { snapshot, change } = bookFrames();
    expect(snapshot).toEqual({
      kind: 'book', symbol: 'BTC_USDC-PERPETUAL', snapshot: true, ts: 1767225600100, lastId: 1550694837,
      bids: [['87000.1', '0.5'], ['86999.9', '1.25'], ['86999', '0.001']],
      asks: [['87000.2', '0.75'], ['87000.5', '2'], ['87001', '0.0035']],
    });
    expect(change).toEqual({
      kind: 'book', symbol: 'BTC_USDC-PERPETUAL', snapshot: false, ts: 1767225600250, lastId: 1550694840, prevId: 1550694837,
      bids: [['87000.1', '0'], ['87000', '0.3']],
      asks: [['87000.3', '1.1']],
    });
    // Hand-written change ("book.{instrument_name}.{interval}"): a delete naming the amount it removes.
    const data = { type: 'change', timestamp: 1767225600300, prev_change_id: 1550694840, instrument_name: 'BTC_USDC-PERPETUAL', change_id: 1550694841, bids: [['delete', 87000, 0.3]], asks: [] };
    expect(deribit.parse(notification('book.BTC_USDC-PERPETUAL.100ms', data))).toMatchObject([{ bids: [['87000', '0']], asks: [] }]);
  });

  test('the sequence rule: apply what follows the last change, drop what is not newer, a gap otherwise', () => {
    const sequence = deribit.book.sequence!;
    const change = (prevId: number, lastId?: number): BookMessage => ({ kind: 'book', symbol: 'BTC_USDC-PERPETUAL', snapshot: false, bids: [], asks: [], prevId, lastId });
    expect(sequence(100, change(100, 104), false)).toBe('apply');
    expect(sequence(100, change(96, 100), false)).toBe('stale');
    expect(sequence(100, change(90, 95), false)).toBe('stale');
    expect(sequence(100, change(101, 105), false)).toBe('gap');
    expect(sequence(100, change(101), false)).toBe('gap');
  });

  test('a snapshot and a chained change; a deletion removes the level; the same change again is stale', () => {
    const { snapshot, change } = bookFrames();
    const sync = new BookSync(deribit.book, btc);
    expect(sync.onMessage(change!)).toBe('ignored');
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.onMessage(change!)).toBe('applied');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 0.3], [86999.9, 1.25], [86999, 0.001]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.2, 0.75], [87000.3, 1.1], [87000.5, 2], [87001, 0.0035]]);
    expect(sync.onMessage(change!)).toBe('stale');
  });

  test('a change that does not follow the last one is a counted resync, answered by unsubscribe + subscribe', () => {
    const { snapshot, change, gap } = bookFrames();
    const sync = new BookSync(deribit.book, btc);
    sync.onMessage(snapshot!);
    sync.onMessage(change!);
    expect(sync.onMessage(gap!)).toBe('gap');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
    expect(deribit.book.resubscribe!(['BTC_USDC-PERPETUAL']).map((s) => [JSON.parse(s).method, JSON.parse(s).params.channels])).toEqual([
      ['public/unsubscribe', ['book.BTC_USDC-PERPETUAL.100ms']],
      ['public/subscribe', ['book.BTC_USDC-PERPETUAL.100ms']],
    ]);
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
  });
});

describe('deribit recorded frames: option books of a cryptofeed session (2021-07-22), BTC-PERPETUAL trades and perpetual books from Tardis.dev samples (2019-2022)', () => {
  test('books: every frame of the session parses and each change names the change it follows', () => {
    const session = recordedSession('deribit');
    const parsed = session.map((f) => deribit.parse(f.text));
    const raw = session.map((f) => JSON.parse(f.text) as { params?: { data: { type: string } } });
    expect(countKinds(parsed.flat())).toEqual({ 'control:ack': 1, book: raw.filter((j) => j.params).length });
    const bySymbol = new Map<string, BookSync>();
    for (const m of parsed.flat()) {
      if (m.kind !== 'book') continue;
      const sync = bySymbol.get(m.symbol) ?? new BookSync(deribit.book, { symbol: m.symbol, base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' });
      bySymbol.set(m.symbol, sync);
      expect(sync.onMessage(m)).toBe(m.snapshot ? 'snapshot' : 'applied');
    }
  });

  test('trades: direction is the taker side, amounts of the inverse perpetual in USD; liquidation T and M name the taker and the maker; the 2019 books without `type` are unknown', () => {
    const recorded = fixture('deribit', 'ws_recorded_tardis.json') as { params: { data: { direction?: string; amount?: number; price?: number; liquidation?: string }[] | { type?: string } } }[];
    const parsed = frames('deribit', 'ws_recorded_tardis.json').map(deribit.parse);
    expect(countKinds(parsed.flat())).toEqual({ trade: 4, liquidation: 2, book: 1, unknown: 2 });
    expect(parsed[1]).toEqual([{ kind: 'unknown' }]);
    expect('type' in (recorded[1]!.params.data as object)).toBe(false);
    expect(parsed[3]!.find((m) => m.kind === 'liquidation')).toMatchObject({ positionSide: 'long', liquidationId: '66460463-T' });
    expect(parsed[4]!.find((m) => m.kind === 'liquidation')).toMatchObject({ positionSide: 'long', liquidationId: '66460626-M' });
    const perp = { symbol: 'BTC-PERPETUAL', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1', inverse: true };
    const [first] = tradesOf(parsed[0]!);
    const raw = (recorded[0]!.params.data as { amount: number; price: number }[])[0]!;
    expect(toTradeEvent('deribit', perp, first!, 1)?.quantity).toBeCloseTo(raw.amount / raw.price, 12);
  });
});

describe('deribit trade history (get_last_trades_by_instrument, by trade_seq)', () => {
  const rest = deribit.history!.rest!;
  const recorded = () => rest.parse(fixture('deribit', 'rest_recorded_last_trades.json'), 'ETH-PERPETUAL')!;

  test('trade_seq numbers an instrument trades consecutively: the recorded BTC-PERPETUAL pair and the recorded page of ten', () => {
    expect(deribit.history!.continuity).toBe('sequential');
    const [first, second] = tradesOf(frames('deribit', 'ws_recorded_tardis.json').map(deribit.parse)[0]!);
    expect([first?.seq, second?.seq]).toEqual([20944815, 20944816]);
    expect(recorded().trades.map((t) => t.seq)).toEqual(Array.from({ length: 10 }, (_, i) => 203024587 + i));
  });

  test('url: 1000 trades from the next trade_seq, oldest first, older days included; a time cursor from its millisecond', () => {
    expect(rest.url('https://x', 'BTC_USDC-PERPETUAL', { ts: 1767225600121, seq: 501899 })).toBe(
      'https://x/api/v2/public/get_last_trades_by_instrument?instrument_name=BTC_USDC-PERPETUAL&start_seq=501900&count=1000&sorting=asc&include_old=true',
    );
    expect(rest.url('https://x', 'BTC-PERPETUAL', { ts: 1767225600121 })).toBe(
      'https://x/api/v2/public/get_last_trades_by_instrument?instrument_name=BTC-PERPETUAL&start_timestamp=1767225600121&count=1000&sorting=asc&include_old=true',
    );
  });

  test('parse: the recorded page with its has_more; the too_many_requests error is no page', () => {
    const page = recorded();
    expect(page.more).toBe(true);
    expect(page.trades[9]).toEqual({ kind: 'trade', symbol: 'ETH-PERPETUAL', tradeId: 'ETH-284830854', seq: 203024596, price: '2968.3', quantity: '106', side: 'buy', ts: 1766332079917 });
    expect(rest.parse({ jsonrpc: '2.0', result: { trades: [], has_more: false } }, 'ETH-PERPETUAL')).toEqual({ trades: [], more: false });
    expect(rest.parse(fixture('deribit', 'rest_rate_limited.json'), 'ETH-PERPETUAL')).toBeUndefined();
    // A row without trade_seq cannot be placed in the sequence.
    const raw = fixture('deribit', 'rest_recorded_last_trades.json') as { result: { trades: Record<string, unknown>[] } };
    const { trade_seq: _dropped, ...unnumbered } = raw.result.trades[0]!;
    expect(rest.parse({ result: { trades: [unnumbered], has_more: false } }, 'ETH-PERPETUAL')).toBeUndefined();
    expect(rest.requestsPerSecond).toBeLessThan(20);
  });

  test('a trade from a page is the event of the same trade from the websocket (the same object, the same conversion)', () => {
    const [fromSocket] = tradesOf(parseAll('ws_trade.json'));
    const frame = (fixture('deribit', 'ws_trade.json') as { params: { data: Record<string, unknown>[] } }[])[0]!;
    const [fromRest] = rest.parse({ jsonrpc: '2.0', result: { trades: [frame.params.data[0]], has_more: false } }, 'BTC_USDC-PERPETUAL')!.trades;
    expect(fromRest).toEqual(fromSocket);
    expect(toTradeEvent('deribit', btc, fromRest!, 6)).toEqual(toTradeEvent('deribit', btc, fromSocket!, 6));
  });
});

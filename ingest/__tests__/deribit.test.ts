import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { deribit, parseInstruments } from '../venues/deribit.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, tradesOf } from './recorded.ts';

const parseAll = (name: string) => frames('deribit', name).flatMap(deribit.parse);
const { markets, unmapped } = selectMarkets(deribit, parseInstruments(fixture('deribit', 'rest_instruments.json')));
const btc = markets.find((m) => m.symbol === 'BTC_USDC-PERPETUAL')!;
const eth: VenueMarket = { symbol: 'ETH_USDC-PERPETUAL', base: 'ETH', quote: 'USDC', asset: 'ethereum', contractSize: '1' };

describe('deribit messages', () => {
  test('trades: `direction` is the taker side; linear perpetual amounts are base coins', () => {
    const parsed = parseAll('ws_trade.json');
    expect(parsed).toEqual([
      { kind: 'trade', symbol: 'BTC_USDC-PERPETUAL', tradeId: 'USDC-2436803', price: '87012.4', quantity: '0.049', side: 'sell', ts: 1767225600121 },
      { kind: 'trade', symbol: 'BTC_USDC-PERPETUAL', tradeId: 'USDC-2436804', price: '87012.5', quantity: '0.2', side: 'buy', ts: 1767225600125 },
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

  test('subscription answers, public/test answers (our pings), errors and heartbeats; unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'pong' },
      { kind: 'control', what: 'error', detail: '-32602: Invalid params' },
      { kind: 'control', what: 'heartbeat' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('instruments: active perpetuals, linear (base amounts) and inverse (USD amounts); dated futures left out', () => {
    expect(markets.map((m) => [m.symbol, m.base, m.quote, m.contractSize, m.asset, m.inverse ?? false])).toEqual([
      ['BTC-PERPETUAL', 'BTC', 'USD', '1', 'bitcoin', true],
      ['BTC_USDC-PERPETUAL', 'BTC', 'USDC', '1', 'bitcoin', false],
      ['ETH_USDC-PERPETUAL', 'ETH', 'USDC', '1', 'ethereum', false],
    ]);
    expect(unmapped).toEqual(['NEWCOIN_USDC-PERPETUAL']);
  });

  test('inverse BTC-PERPETUAL: a trade of 2500 USD at 87012.5 is 2500 / 87012.5 BTC', () => {
    const inverse = markets.find((m) => m.symbol === 'BTC-PERPETUAL')!;
    const frame = { jsonrpc: '2.0', method: 'subscription', params: { channel: 'trades.BTC-PERPETUAL.100ms', data: [{ trade_id: '371000001', trade_seq: 1, timestamp: 1767225600121, price: 87012.5, amount: 2500, direction: 'buy', tick_direction: 0, index_price: 87011, mark_price: 87012, instrument_name: 'BTC-PERPETUAL' }] } };
    const [t] = deribit.parse(JSON.stringify(frame));
    expect(toTradeEvent('deribit', inverse, t as Extract<VenueMessage, { kind: 'trade' }>, 0)).toMatchObject({ market: 'BTC-PERPETUAL', quote: 'USD', price: 87012.5, quantity: 2500 / 87012.5 });
  });

  test('subscriptions: JSON-RPC public/subscribe with the public 100 ms channels', () => {
    const [plan] = deribit.sockets({ ws: 'wss://d', rest: 'https://d' }, [btc]);
    expect(plan!.url).toBe('wss://d/ws/api/v2');
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'public/subscribe', params: { channels: ['trades.BTC_USDC-PERPETUAL.100ms', 'book.BTC_USDC-PERPETUAL.100ms'] } },
    ]);
  });
});

describe('deribit book sync (prev_change_id must be the last change_id)', () => {
  const [snapshot] = parseAll('ws_book_snapshot.json') as BookMessage[];
  const [change, gap] = parseAll('ws_book_update.json') as BookMessage[];

  test('a snapshot and a chained change; a deletion removes the level', () => {
    const sync = new BookSync(deribit.book, btc);
    expect(sync.onMessage(change!)).toBe('ignored');
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.onMessage(change!)).toBe('applied');
    expect(sync.book.top('bid', 5)).toEqual([[87000, 0.3], [86999.9, 1.25], [86999, 0.001]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.2, 0.75], [87000.3, 1.1], [87000.5, 2], [87001, 0.0035]]);
  });

  test('a change that does not follow the last one is a counted resync, answered by unsubscribe + subscribe', () => {
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

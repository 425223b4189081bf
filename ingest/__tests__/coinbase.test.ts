import { describe, expect, test } from 'vitest';
import { BookSync, ConnectionSequence } from '../bookSync.ts';
import { selectMarkets } from '../collector.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { coinbase, parseProducts } from '../venues/coinbase.ts';
import { fixture, frames } from './fixtures.ts';

const parseAll = (name: string) => frames('coinbase', name).flatMap(coinbase.parse);
const btc: VenueMarket = { symbol: 'BTC-USD', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' };
const withoutSequence = (messages: VenueMessage[]) => messages.filter((m) => m.kind !== 'sequence');

describe('coinbase messages', () => {
  test('trades: side as the venue reports the taker, RFC 3339 times to ms; the recent-trades snapshot is skipped', () => {
    expect(parseAll('ws_trade.json')).toEqual([
      { kind: 'sequence', value: 12 },
      { kind: 'trade', symbol: 'BTC-USD', tradeId: '771002', price: '87012.5', quantity: '0.2', side: 'buy', ts: 1767225600125 },
      { kind: 'trade', symbol: 'BTC-USD', tradeId: '771001', price: '87012.4', quantity: '0.0152', side: 'sell', ts: 1767225600121 },
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

  test('products: online spot products of catalog assets; an alias (BTC-USDC of BTC-USD) is the same book, left out', () => {
    const { markets, unmapped } = selectMarkets(coinbase, parseProducts(fixture('coinbase', 'rest_products.json')));
    expect(markets.map((m) => m.symbol)).toEqual(['BTC-USD', 'SOL-USDT']);
    expect(unmapped).toEqual([]);
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

describe('coinbase book sync', () => {
  const snapshotFrames = parseAll('ws_book_snapshot.json');
  const updateFrames = parseAll('ws_book_update.json');
  const books = (messages: VenueMessage[]) => messages.filter((m): m is BookMessage => m.kind === 'book');
  const sequences = (messages: VenueMessage[]) => messages.flatMap((m) => (m.kind === 'sequence' ? [m.value] : []));

  test('a jump in the connection sequence is a lost message: the books it may have changed are dropped and counted', () => {
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

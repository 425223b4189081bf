import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage, VenueSession } from '../venue.ts';
import { bitfinex, bitfinexDerivatives, parsePairList } from '../venues/bitfinex.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, tradesOf } from './recorded.ts';

/** Frames of one connection, in order, through one session. */
const parseIn = (session: VenueSession, ...names: string[]) => names.flatMap((n) => frames('bitfinex', n)).flatMap((f) => session.parse(f));
const btc: VenueMarket = { symbol: 'tBTCUSD', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' };
const books = (messages: VenueMessage[]) => messages.filter((m): m is BookMessage => m.kind === 'book');

describe('bitfinex messages', () => {
  test('trades: the sign of AMOUNT is the taker side; te counted, tu (the same trade again) and the snapshot skipped', () => {
    const parsed = parseIn(bitfinex.session!(), 'ws_trade.json');
    expect(parsed).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'status', detail: 'trade snapshot' },
      { kind: 'trade', symbol: 'tBTCUSD', tradeId: '1650032110', price: '87012.4', quantity: '0.0152', side: 'sell', ts: 1767225600121 },
      { kind: 'trade', symbol: 'tBTCUSD', tradeId: '1650032111', price: '87012.5', quantity: '0.2', side: 'buy', ts: 1767225600125 },
      { kind: 'control', what: 'heartbeat' },
    ]);
    expect(toTradeEvent('bitfinex', btc, parsed[2] as Extract<VenueMessage, { kind: 'trade' }>, 3)).toMatchObject({ market: 'tBTCUSD', asset: 'bitcoin', quantity: 0.0152, side: 'sell' });
  });

  test('channel data means nothing without the subscription that numbered it: a lone frame, or another connection', () => {
    const [, , te] = frames('bitfinex', 'ws_trade.json');
    expect(bitfinex.parse(te!)).toEqual([{ kind: 'unknown' }]);
    const other = bitfinex.session!();
    expect(other.parse(te!)).toEqual([{ kind: 'unknown' }]);
  });

  test('liquidations: only the trigger (IS_MATCH 0); AMOUNT is the position, its sign the side; at the price the position was taken over', () => {
    const parsed = parseIn(bitfinexDerivatives.session!(), 'ws_liquidation.json').filter((m) => m.kind === 'liquidation');
    expect(parsed).toEqual([
      { kind: 'liquidation', symbol: 'tBTCF0:USTF0', liquidationId: '152101877', price: '86840.2', quantity: '0.35', positionSide: 'long', ts: 1767225601000 },
      { kind: 'liquidation', symbol: 'tSOLF0:USTF0', liquidationId: '152101878', price: '187.35', quantity: '70', positionSide: 'short', ts: 1767225601007 },
    ]);
    const perp: VenueMarket = { symbol: 'tBTCF0:USTF0', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
    expect(toLiquidationEvent('bitfinex-derivatives', perp, parsed[0] as Extract<VenueMessage, { kind: 'liquidation' }>, 4)).toMatchObject({ quantity: 0.35, price: 86840.2, positionSide: 'long' });
    expect(bitfinexDerivatives.liquidations?.sampled).toBe(false);
  });

  test('recorded liq:global (Tardis.dev): a trigger sent before its match, PRICE_ACQUIRED null, is published at BASE_PRICE', () => {
    const session = bitfinexDerivatives.session!();
    // Hand-written: the recording's subscription event for channel 907 is not in the sample.
    session.parse(JSON.stringify({ event: 'subscribed', channel: 'status', chanId: 907, key: 'liq:global' }));
    const recorded = fixture('bitfinex', 'ws_liquidation_recorded.json') as unknown[];
    const parsed = frames('bitfinex', 'ws_liquidation_recorded.json').flatMap((f) => session.parse(f));
    expect(parsed.filter((m) => m.kind === 'unknown')).toEqual([]);
    // Expected from the raw rows: every IS_MATCH 0 row, at PRICE_ACQUIRED, else BASE_PRICE; the match row (same POS_ID, part of the position) is not another liquidation.
    const triggers = recorded.flatMap((f) => (Array.isArray(f) && Array.isArray(f[1]) ? (f[1] as unknown[][]) : [])).filter((row) => row[8] === 0);
    expect(triggers).toHaveLength(3);
    expect(parsed.filter((m) => m.kind === 'liquidation')).toEqual(
      triggers.map((row) => ({
        kind: 'liquidation',
        symbol: row[4],
        liquidationId: String(row[1]),
        price: String(row[11] ?? row[6]),
        quantity: String(Math.abs(row[5] as number)),
        positionSide: (row[5] as number) > 0 ? 'long' : 'short',
        ts: row[2],
      })),
    );
    expect(parsed.at(-1)).toMatchObject({ liquidationId: '143679087', price: '222.248906484356', quantity: '8.6007', positionSide: 'short' });
  });

  test('info, the 20051 reconnect request, conf, pongs, errors, unsubscriptions; unknown frames', () => {
    expect(parseIn(bitfinex.session!(), 'ws_control.json')).toEqual([
      { kind: 'control', what: 'status', detail: 'info' },
      { kind: 'control', what: 'reconnect', detail: '20051: Stop/Restart Websocket Server (please reconnect)' },
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'pong' },
      { kind: 'control', what: 'error', detail: '10301: subscribe: dup' },
      { kind: 'control', what: 'ack' },
    ]);
    expect(parseIn(bitfinex.session!(), 'ws_unknown.json')).toEqual([{ kind: 'control', what: 'ack' }, { kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('pairs: three-letter pairs split in the middle, longer ones at the colon, perpetuals without F0; UST is USDT', () => {
    expect(parsePairList(fixture('bitfinex', 'rest_pairs_exchange.json'), 'exchange').map((l) => [l.symbol, l.base, l.quote])).toEqual([
      ['tBTCUSD', 'BTC', 'USD'],
      ['tBTCUST', 'BTC', 'USDT'],
      ['tETHBTC', 'ETH', 'BTC'],
      ['tDOGE:USD', 'DOGE', 'USD'],
      ['tXRPUSD', 'XRP', 'USD'],
      ['tTESTBTC:TESTUSD', 'TESTBTC', 'TESTUSD'],
      ['tBCHN:USD', 'BCHN', 'USD'],
    ]);
    const spot = selectMarkets(bitfinex, parsePairList(fixture('bitfinex', 'rest_pairs_exchange.json'), 'exchange'));
    expect(spot.markets.map((m) => [m.symbol, m.asset])).toEqual([
      ['tBTCUSD', 'bitcoin'],
      ['tBTCUST', 'bitcoin'],
      ['tDOGE:USD', 'dogecoin'],
      ['tXRPUSD', 'ripple'],
      ['tBCHN:USD', 'bitcoin-cash'],
    ]);
    const perps = selectMarkets(bitfinexDerivatives, parsePairList(fixture('bitfinex', 'rest_pairs_futures.json'), 'futures'));
    expect(perps.markets.map((m) => [m.symbol, m.base, m.quote, m.asset])).toEqual([
      ['tBTCF0:USTF0', 'BTC', 'USDT', 'bitcoin'],
      ['tETHF0:USTF0', 'ETH', 'USDT', 'ethereum'],
      ['tSOLF0:USTF0', 'SOL', 'USDT', 'solana'],
    ]);
    expect(perps.unmapped).toEqual(['tBTCDOMF0:USTF0']);
  });

  test('subscriptions: checksums asked first, 25 channels per connection, the liquidation feed once', () => {
    const many = Array.from({ length: 13 }, (_, i): VenueMarket => ({ ...btc, symbol: `tP${i}USD` }));
    const plans = bitfinexDerivatives.sockets({ ws: 'wss://f', rest: 'https://f' }, many);
    const channels = plans.map((p) => p.subscribe.map((s) => JSON.parse(s)).filter((m) => m.event === 'subscribe').length);
    expect(channels).toEqual([25, 2]);
    expect(plans.map((p) => JSON.parse(p.subscribe[0]!))).toEqual([
      { event: 'conf', flags: 131072 },
      { event: 'conf', flags: 131072 },
    ]);
    expect(JSON.parse(plans[0]!.subscribe.at(-1)!)).toEqual({ event: 'subscribe', channel: 'status', key: 'liq:global' });
    expect(JSON.parse(plans[0]!.subscribe[2]!)).toEqual({ event: 'subscribe', channel: 'book', symbol: 'tP0USD', prec: 'P0', freq: 'F0', len: '100' });
    expect(plans[0]!.url).toBe('wss://f/ws/2');
    expect(bitfinex.sockets({ ws: 'wss://f', rest: 'https://f' }, many.slice(0, 12)).map((p) => p.subscribe.length)).toEqual([25]);
  });
});

describe('bitfinex book sync (checksum after every change)', () => {
  test('a snapshot and level changes, each confirmed by the venue checksum', () => {
    const session = bitfinex.session!();
    const snapshotFrames = books(parseIn(session, 'ws_book_snapshot.json'));
    const sync = new BookSync(bitfinex.book, btc);
    expect(snapshotFrames.map((b) => sync.onMessage(b))).toEqual(['snapshot', 'applied']);
    const updates = books(parseIn(session, 'ws_book_update.json'));
    // COUNT 0 removes the level on the side AMOUNT's sign names.
    expect(updates[0]).toEqual({ kind: 'book', symbol: 'tBTCUSD', snapshot: false, bids: [['87000.1', '0']], asks: [] });
    expect(updates.map((b) => sync.onMessage(b))).toEqual(['applied', 'applied', 'applied', 'applied']);
    expect(sync.book.top('bid', 5)).toEqual([[87000, 0.3], [86999.9, 1.25], [86999, 0.001]]);
    expect(sync.book.top('ask', 5)).toEqual([[87000.2, 0.75], [87000.3, 1.1], [87000.5, 2], [87001, 0.0035]]);
  });

  test('a checksum the book does not match is a counted resync; the session unsubscribes the channel by number and subscribes again', () => {
    const session = bitfinex.session!();
    const sync = new BookSync(bitfinex.book, btc);
    for (const b of books(parseIn(session, 'ws_book_snapshot.json', 'ws_book_update.json'))) sync.onMessage(b);
    const [change, checksum] = books(parseIn(session, 'ws_book_bad_checksum.json'));
    expect(sync.onMessage(change!)).toBe('applied');
    expect(sync.onMessage(checksum!)).toBe('checksum');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
    expect(session.resubscribe!(['tBTCUSD']).map((s) => JSON.parse(s))).toEqual([
      { event: 'unsubscribe', chanId: 17082 },
      { event: 'subscribe', channel: 'book', symbol: 'tBTCUSD', prec: 'P0', freq: 'F0', len: '100' },
    ]);
  });
});

describe('bitfinex recorded session (cryptofeed, 2021-04-17, trades and P0 books of seven pairs on one connection, SEQ_ALL)', () => {
  const session = recordedSession('bitfinex');
  const connection = bitfinex.session!();
  const parsed = session.map((f) => connection.parse(f.text));

  test('every frame parses, heartbeats included on channels whose subscription is not confirmed yet; the sequence number SEQ_ALL appends is ignored', () => {
    const raw = session.map((f) => JSON.parse(f.text) as unknown);
    const events = raw.filter((j) => !Array.isArray(j)) as { event: string }[];
    const arrays = raw.filter((j): j is unknown[] => Array.isArray(j));
    const hb = arrays.filter((j) => j[1] === 'hb').length;
    const trades = arrays.filter((j) => j[1] === 'te').length;
    const snapshots = arrays.filter((j) => Array.isArray(j[1]) && Array.isArray((j[1] as unknown[])[0])).length;
    const counts = countKinds(parsed.flat());
    expect(counts['control:heartbeat']).toBe(hb);
    expect(counts['control:ack']).toBe(events.filter((e) => e.event !== 'info').length);
    expect(counts.trade ?? 0).toBe(trades);
    expect(counts.unknown).toBeUndefined();
    expect(counts.book! + counts['control:status']! - 1).toBe(arrays.length - hb - trades);
    expect(snapshots).toBe(14);
    // Recorded: channel 232954 beat (sequence 139) seven seconds before its `subscribed` event.
    expect(connection.parse('[1,"hb",1]')).toEqual([{ kind: 'control', what: 'heartbeat' }]);
  });
});

import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLiquidationEvent, toTradeEvent } from '../normalize.ts';
import type { BookMessage, VenueMarket, VenueMessage, VenueSession } from '../venue.ts';
import { bitfinex, bitfinexDerivatives, parsePairList, parseTradesHistory, tradesPageSize } from '../venues/bitfinex.ts';
import { cannedIo } from './cannedIo.ts';
import { fixture, frames } from './fixtures.ts';
import { countKinds, recordedSession, tradesOf } from './recorded.ts';

/** Frames of one connection, in order, through one session. */
const parseIn = (session: VenueSession, ...names: string[]) => names.flatMap((n) => frames('bitfinex', n)).flatMap((f) => session.parse(f));
const btc: VenueMarket = { symbol: 'tBTCUSD', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' };
const books = (messages: VenueMessage[]) => messages.filter((m): m is BookMessage => m.kind === 'book');
/** A hand-written frame, given as the JSON it is. */
const frame = (json: unknown) => JSON.stringify(json);

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
    // A heartbeat needs no subscription, but it needs a channel number.
    expect(other.parse(frame([null, 'hb']))).toEqual([{ kind: 'unknown' }]);
  });

  test('recorded (Tardis.dev): trades snapshot skipped, te counted, tu skipped; a book snapshot and its changes, a deletion as 0 on the side of its sign', () => {
    expect(parseIn(bitfinex.session!(), 'ws_recorded_tardis.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'status', detail: 'trade snapshot' },
      { kind: 'trade', symbol: 'tBTCUSD', tradeId: '382489563', price: '10087.98969503', quantity: '0.00705845', side: 'buy', ts: 1564617600709 },
      { kind: 'control', what: 'ack' },
      { kind: 'book', symbol: 'tETHUSD', snapshot: true, bids: [['216', '31.52']], asks: [['218.75', '13.33333333'], ['218.76', '2']] },
      { kind: 'book', symbol: 'tETHUSD', snapshot: false, bids: [], asks: [['219.11', '18.10913638']] },
      { kind: 'book', symbol: 'tETHUSD', snapshot: false, bids: [], asks: [['218.99', '0']] },
      { kind: 'book', symbol: 'tETHUSD', snapshot: false, bids: [['218.03', '0']], asks: [] },
      { kind: 'control', what: 'heartbeat' },
    ]);
  });

  test('AMOUNT exactly 0 (never sent: the docs define only > 0 and < 0) is not read as a buy, a bid or a long', () => {
    const session = bitfinexDerivatives.session!();
    session.parse(frame({ event: 'subscribed', channel: 'trades', chanId: 1, symbol: 'tBTCF0:USTF0' }));
    session.parse(frame({ event: 'subscribed', channel: 'book', chanId: 2, symbol: 'tBTCF0:USTF0' }));
    session.parse(frame({ event: 'subscribed', channel: 'status', chanId: 3, key: 'liq:global' }));
    expect(session.parse(frame([1, 'te', [1650032112, 1767225600130, 0, 87012.5]]))).toMatchObject([{ kind: 'trade', side: 'sell' }]);
    expect(session.parse(frame([2, [87000.4, 1, 0]]))).toMatchObject([{ kind: 'book', bids: [], asks: [['87000.4', '0']] }]);
    const position = ['pos', 152101879, 1767225601000, null, 'tBTCF0:USTF0', 0, 88950.5, null, 0, 1, null, 86840.2];
    expect(session.parse(frame([3, [position]]))).toMatchObject([{ kind: 'liquidation', positionSide: 'short' }]);
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

  test('liq:global frames whole: the market execution gives nothing, a payload that is no list of position rows is unknown; no other status key is a liquidation feed', () => {
    const session = bitfinexDerivatives.session!();
    expect(frames('bitfinex', 'ws_liquidation.json').map((f) => session.parse(f).map((m) => m.kind))).toEqual([['control'], [], ['liquidation', 'liquidation'], ['control']]);
    expect(session.parse(frame([91684, 'x']))).toEqual([{ kind: 'unknown' }]);
    expect(session.parse(frame([91684, [['pos', 152101877]]]))).toEqual([{ kind: 'unknown' }]);
    // The derivatives status of one perpetual (ws-public-status, key deriv:SYMBOL): its frames are not read, whatever they hold.
    const [, , triggers] = frames('bitfinex', 'ws_liquidation.json');
    session.parse(frame({ event: 'subscribed', channel: 'status', chanId: 91700, key: 'deriv:tBTCF0:USTF0' }));
    expect(session.parse(triggers!.replace('91684', '91700'))).toEqual([{ kind: 'unknown' }]);
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

  test('info codes and errors with a field missing; events we do not read and objects that are no event are unknown, never thrown', () => {
    const session = bitfinex.session!();
    // Codes and messages from ws-general (Info Messages, Error Codes); the fields left out are the cases.
    const events = [
      { event: 'info', code: 20051 },
      { event: 'info', code: 20060, msg: 'Entering in Maintenance mode. Please pause any activity and resume after receiving the info message 20061 (it should take 120 seconds at most).' },
      { event: 'info', code: 20061 },
      { event: 'error', msg: 'Unknown event' },
      { event: 'error', code: 10305 },
      // ws-auth's reply to a refused authentication: no event of a public connection.
      { event: 'auth', status: 'FAILED', msg: 'apikey: invalid', code: 10100 },
      {},
      null,
    ];
    expect(events.flatMap((e) => session.parse(frame(e)))).toEqual([
      { kind: 'control', what: 'reconnect', detail: '20051: ' },
      { kind: 'control', what: 'status', detail: '20060: Entering in Maintenance mode. Please pause any activity and resume after receiving the info message 20061 (it should take 120 seconds at most).' },
      { kind: 'control', what: 'status', detail: '20061: ' },
      { kind: 'control', what: 'error', detail: ': Unknown event' },
      { kind: 'control', what: 'error', detail: '10305: ' },
      { kind: 'unknown' },
      { kind: 'unknown' },
      { kind: 'unknown' },
    ]);
  });
});

describe('bitfinex pairs and subscriptions', () => {
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
    expect(parsePairList(fixture('bitfinex', 'rest_pairs_exchange.json'), 'exchange')[0]).toEqual({ symbol: 'tBTCUSD', base: 'BTC', quote: 'USD', contractSize: '1' });
  });

  test('pairs that cannot be split, and futures that are not F0 on both sides, are left out', () => {
    // Hand-written in the list's shape: names the venue does not list, each missing one part.
    expect(parsePairList([['BTC', 'DOGE:', ':USD']], 'exchange')).toEqual([]);
    expect(parsePairList([['BTC:USTF0', 'BTCF0:UST', 'BTCF0:USTF0']], 'futures').map((l) => l.symbol)).toEqual(['tBTCF0:USTF0']);
  });

  test('market listings: the exchange and the futures pair lists on the REST endpoint', async () => {
    const endpoints = { ws: 'wss://f', rest: 'https://f' };
    const labels = 'https://f/v2/conf/pub:map:currency:label';
    const spot = cannedIo({ 'https://f/v2/conf/pub:list:pair:exchange': fixture('bitfinex', 'rest_pairs_exchange.json'), [labels]: fixture('bitfinex', 'rest_currency_labels.json') });
    const listed = await bitfinex.listMarkets(spot.io, endpoints);
    // Each base named from the currency labels where they name it (TEST and UST are not there).
    expect(listed.map((l) => [l.symbol, l.baseName])).toEqual([
      ['tBTCUSD', 'Bitcoin'],
      ['tBTCUST', 'Bitcoin'],
      ['tETHBTC', 'Ethereum'],
      ['tDOGE:USD', 'Dogecoin'],
      ['tXRPUSD', 'XRP'],
      ['tTESTBTC:TESTUSD', undefined],
      ['tBCHN:USD', 'Bitcoin Cash Node'],
    ]);
    expect(spot.asked.sort()).toEqual(['https://f/v2/conf/pub:list:pair:exchange', labels]);
    // The futures without an answer from the labels: listed all the same, unnamed.
    const futures = cannedIo({ 'https://f/v2/conf/pub:list:pair:futures': fixture('bitfinex', 'rest_pairs_futures.json') });
    const contracts = await bitfinexDerivatives.listMarkets(futures.io, endpoints);
    expect(contracts.map((l) => l.symbol)).toEqual(['tBTCF0:USTF0', 'tETHF0:USTF0', 'tSOLF0:USTF0', 'tBTCDOMF0:USTF0', 'tTESTBTCF0:TESTUSDTF0']);
    expect(contracts.map((l) => l.baseName)).toEqual(Array(5).fill(undefined));
    expect(futures.asked.sort()).toEqual(['https://f/v2/conf/pub:list:pair:futures', labels]);
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
    expect(JSON.parse(plans[0]!.subscribe[1]!)).toEqual({ event: 'subscribe', channel: 'trades', symbol: 'tP0USD' });
    expect(JSON.parse(plans[0]!.subscribe[2]!)).toEqual({ event: 'subscribe', channel: 'book', symbol: 'tP0USD', prec: 'P0', freq: 'F0', len: '100' });
    expect(plans.map((p) => p.symbols)).toEqual([many.slice(0, 12).map((m) => m.symbol), ['tP12USD']]);
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

  test('a checksum frame is a book message with no levels; a checksum that is no number, or a payload that is no level, is unknown', () => {
    const session = bitfinex.session!();
    const [, checksum] = books(parseIn(session, 'ws_book_snapshot.json'));
    expect(checksum).toEqual({ kind: 'book', symbol: 'tBTCUSD', snapshot: false, bids: [], asks: [], checksum: -1835237626 });
    expect(session.parse(frame([17082, 'cs', '-1835237626']))).toEqual([{ kind: 'unknown' }]);
    expect(session.parse(frame([17082, [87000.1, 2]]))).toEqual([{ kind: 'unknown' }]);
  });

  test('a snapshot is a list of rows, an empty one included; an update one row; a list with a row that is no level is unknown', () => {
    const session = bitfinex.session!();
    parseIn(session, 'ws_book_snapshot.json');
    expect(session.parse(frame([17082, []]))).toEqual([{ kind: 'book', symbol: 'tBTCUSD', snapshot: true, bids: [], asks: [] }]);
    expect(session.parse(frame([17082, [[87000, 1, 0.5], [87001, 2, -1.5]]]))).toEqual([{ kind: 'book', symbol: 'tBTCUSD', snapshot: true, bids: [['87000', '0.5']], asks: [['87001', '1.5']] }]);
    expect(session.parse(frame([17082, [87000, 0, -1]]))).toEqual([{ kind: 'book', symbol: 'tBTCUSD', snapshot: false, bids: [], asks: [['87000', '0']] }]);
    expect(session.parse(frame([17082, [[87000, 1, 0.5], [87001, 2]]]))).toEqual([{ kind: 'unknown' }]);
    expect(session.parse(frame([17082, [[87000, 1, 0.5], 87001]]))).toEqual([{ kind: 'unknown' }]);
  });

  test('an unsubscription forgets the channel; a failed one (an error naming the channel) keeps it', () => {
    const session = bitfinex.session!();
    parseIn(session, 'ws_book_snapshot.json');
    const [change] = frames('bitfinex', 'ws_book_update.json');
    // Bitfinex's refusal of an unsubscribe names the channel: thrasher-corp/gocryptotrader matches it to
    // the request by its chanId (exchanges/bitfinex/bitfinex_websocket.go, handleWSEvent).
    expect(session.parse(frame({ event: 'error', msg: 'unsubscribe: invalid', code: 10400, chanId: 17082 }))).toEqual([{ kind: 'control', what: 'error', detail: '10400: unsubscribe: invalid' }]);
    expect(session.parse(change!)).toMatchObject([{ kind: 'book', symbol: 'tBTCUSD' }]);
    expect(session.parse(frame({ event: 'unsubscribed', status: 'OK', chanId: 17082 }))).toEqual([{ kind: 'control', what: 'ack' }]);
    expect(session.parse(change!)).toEqual([{ kind: 'unknown' }]);
    expect(session.resubscribe!(['tBTCUSD']).map((s) => JSON.parse(s))).toEqual([{ event: 'subscribe', channel: 'book', symbol: 'tBTCUSD', prec: 'P0', freq: 'F0', len: '100' }]);
  });

  test('a resync unsubscribes only the book channels of the markets named, not their trades nor other books', () => {
    // One connection: the tBTCUSD book (17082), tBTCUSD trades (89) and the tETHUSD book (6959).
    const session = bitfinex.session!();
    parseIn(session, 'ws_book_snapshot.json', 'ws_recorded_tardis.json');
    expect(session.resubscribe!(['tBTCUSD']).map((s) => JSON.parse(s))).toEqual([
      { event: 'unsubscribe', chanId: 17082 },
      { event: 'subscribe', channel: 'book', symbol: 'tBTCUSD', prec: 'P0', freq: 'F0', len: '100' },
    ]);
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

  test('every frame parses, heartbeats included on channels whose subscription is not confirmed yet; the sequence number SEQ_ALL appends is ignored', () => {
    // Parsed inside the test, not when the suite is collected: mutation testing attributes coverage per test.
    const connection = bitfinex.session!();
    const parsed = session.map((f) => connection.parse(f.text));
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

describe('bitfinex trade history (REST trades/{symbol}/hist: the whole history, paged on the millisecond)', () => {
  const rest = () => bitfinex.history!.rest!;

  test('continuity by time, no reach limit, under 15 requests a minute; pages start at the cursor millisecond, oldest first, 10,000 at most', () => {
    expect(bitfinex.history).toMatchObject({ continuity: 'time' });
    expect(rest().reachMs).toBeUndefined();
    expect(rest().latestOnly).toBeUndefined();
    expect(rest().requestsPerSecond * 60).toBeLessThan(15);
    expect(bitfinexDerivatives.history).toBe(bitfinex.history);
    expect(rest().url('https://api-pub.bitfinex.com', 'tBTCUST', { ts: 1710327651446, tradeId: '1560452102' })).toBe(
      'https://api-pub.bitfinex.com/v2/trades/tBTCUST/hist?start=1710327651446&limit=10000&sort=1',
    );
    // Perpetuals' symbols carry a colon: sent encoded.
    expect(rest().url('https://api-pub.bitfinex.com', 'tBTCF0:USTF0', { ts: 5 })).toBe('https://api-pub.bitfinex.com/v2/trades/tBTCF0%3AUSTF0/hist?start=5&limit=10000&sort=1');
  });

  test('a recorded page: the row as on the websocket, the sign of AMOUNT the taker side; a short page is the last', () => {
    expect(rest().parse(fixture('bitfinex', 'rest_recorded_trades_hist.json'), 'tBTCUST')).toEqual({
      trades: [{ kind: 'trade', symbol: 'tBTCUST', tradeId: '1560452102', price: '73218', quantity: '0.00019983', side: 'buy', ts: 1710327651446 }],
      more: false,
    });
    const [row] = fixture('bitfinex', 'rest_recorded_trades_hist.json') as number[][];
    const full = Array.from({ length: tradesPageSize }, (_, i) => [row![0]! + i, row![1]!, -row![2]!, row![3]!]);
    const page = parseTradesHistory(full, 'tBTCUST')!;
    expect(page.more).toBe(true);
    expect(page.trades[0]).toMatchObject({ tradeId: '1560452102', side: 'sell', quantity: '0.00019983' });
    expect(parseTradesHistory(full.slice(1), 'tBTCUST')!.more).toBe(false);
  });

  test('a REST row is the websocket trade of the same execution: one id, price, base quantity, side and time', () => {
    const [row] = fixture('bitfinex', 'rest_recorded_trades_hist.json') as number[][];
    const [fromRest] = parseTradesHistory([row], 'tBTCUSD')!.trades;
    const session = bitfinex.session!();
    session.parse(frame({ event: 'subscribed', channel: 'trades', chanId: 7, symbol: 'tBTCUSD', pair: 'BTCUSD' }));
    const [fromWs] = session.parse(frame([7, 'te', row]));
    expect(toTradeEvent('bitfinex', btc, fromRest!, 1)).toEqual(toTradeEvent('bitfinex', btc, fromWs as NonNullable<typeof fromRest>, 1));
  });

  test('the refusal past the rate limit, and rows that are no trades, are not understood', () => {
    expect(parseTradesHistory(fixture('bitfinex', 'rest_rate_limited.json'), 'tBTCUSD')).toBeUndefined();
    expect(parseTradesHistory([[1560452102, 1710327651446, '0.00019983', 73218]], 'tBTCUSD')).toBeUndefined();
    expect(parseTradesHistory({ error: 'ERR_RATE_LIMIT' }, 'tBTCUSD')).toBeUndefined();
  });
});

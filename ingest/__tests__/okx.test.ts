import { describe, expect, test } from 'vitest';
import { BookSync } from '../bookSync.ts';
import { selectMarkets, toLevels, toLiquidationEvent, toTradeEvent } from '../collector.ts';
import type { BookMessage, VenueMarket, VenueMessage } from '../venue.ts';
import { okx, okxSwap, parseInstruments } from '../venues/okx.ts';
import { fixture, frames } from './fixtures.ts';

const parseAll = (name: string) => frames('okx', name).flatMap(okx.parse);
const swapMarkets = selectMarkets(okxSwap, parseInstruments(fixture('okx', 'rest_instruments_swap.json'), 'SWAP'));
const btcSwap = swapMarkets.markets.find((m) => m.symbol === 'BTC-USDT-SWAP')!;
const ethSwap = swapMarkets.markets.find((m) => m.symbol === 'ETH-USDT-SWAP')!;

describe('okx messages', () => {
  test('trades: taker side as sent; swap sizes are contracts, converted with ctVal to base units', () => {
    const [first, second, swap] = parseAll('ws_trade.json') as Extract<VenueMessage, { kind: 'trade' }>[];
    expect(first).toEqual({ kind: 'trade', symbol: 'BTC-USDT', tradeId: '730915421', price: '87012.4', quantity: '0.01520000', side: 'sell', ts: 1767225600121 });
    expect(second).toMatchObject({ tradeId: '730915422', side: 'buy', quantity: '0.2' });
    const spot: VenueMarket = { symbol: 'BTC-USDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
    expect(toTradeEvent('okx', spot, first!, 1)).toMatchObject({ quantity: 0.0152, price: 87012.4 });
    // 12 contracts of 0.1 ETH: 1.2 ETH, exactly (not 1.2000000000000002).
    expect(ethSwap.contractSize).toBe('0.1');
    expect(toTradeEvent('okx-swap', ethSwap, swap!, 1)).toMatchObject({ market: 'ETH-USDT-SWAP', asset: 'ethereum', quantity: 1.2, side: 'sell', ts: 1767225600456 });
  });

  test('liquidations: the position named by posSide, or in net mode the one a forced order closes; sizes in contracts', () => {
    const [long, net] = parseAll('ws_liquidation.json') as Extract<VenueMessage, { kind: 'liquidation' }>[];
    expect(long).toEqual({ kind: 'liquidation', symbol: 'BTC-USDT-SWAP', liquidationId: '1767225601000-sell-35@86840.2', price: '86840.2', quantity: '35', positionSide: 'long', ts: 1767225601000 });
    expect(net).toMatchObject({ symbol: 'SOL-USDT-SWAP', positionSide: 'short', quantity: '7' });
    // 35 contracts of 0.01 BTC.
    expect(toLiquidationEvent('okx-swap', btcSwap, long!, 2)).toMatchObject({ quantity: 0.35, price: 86840.2, positionSide: 'long' });
    expect(okxSwap.liquidations?.sampled).toBe(true);
  });

  test('acks, errors, the 64008 notice (a reconnect request), pongs and unknown frames', () => {
    expect(parseAll('ws_control.json')).toEqual([
      { kind: 'control', what: 'ack' },
      { kind: 'control', what: 'error', detail: "60018: Wrong URL or channel:books,instId:NOPE-USDT doesn't exist" },
      { kind: 'control', what: 'reconnect', detail: '64008: The connection will soon be closed for a service upgrade. Please reconnect.' },
      { kind: 'control', what: 'pong' },
    ]);
    expect(parseAll('ws_unknown.json')).toEqual([{ kind: 'unknown' }, { kind: 'unknown' }, { kind: 'unknown' }]);
  });

  test('instruments: live linear swaps with their contract value; inverse swaps and suspended ones left out', () => {
    expect(swapMarkets.markets.map((m) => [m.symbol, m.base, m.quote, m.contractSize, m.asset])).toEqual([
      ['BTC-USDT-SWAP', 'BTC', 'USDT', '0.01', 'bitcoin'],
      ['ETH-USDT-SWAP', 'ETH', 'USDT', '0.1', 'ethereum'],
    ]);
    expect(swapMarkets.unmapped).toEqual(['NEWCOIN-USDT-SWAP']);
    const spot = selectMarkets(okx, parseInstruments(fixture('okx', 'rest_instruments_spot.json'), 'SPOT'));
    expect(spot.markets.map((m) => m.symbol)).toEqual(['BTC-USDT', 'SOL-USDC']);
  });

  test('subscriptions: trades and books per instrument, liquidations once per instrument type', () => {
    const [plan] = okxSwap.sockets({ ws: 'wss://o', rest: 'https://o' }, [btcSwap]);
    expect(plan!.url).toBe('wss://o/ws/v5/public');
    expect(plan!.subscribe.map((s) => JSON.parse(s))).toEqual([
      { op: 'subscribe', args: [{ channel: 'trades', instId: 'BTC-USDT-SWAP' }, { channel: 'books', instId: 'BTC-USDT-SWAP' }, { channel: 'liquidation-orders', instType: 'SWAP' }] },
    ]);
    expect(okx.book.resubscribe!(['BTC-USDT']).map((s) => JSON.parse(s).op)).toEqual(['unsubscribe', 'subscribe']);
  });
});

describe('okx book sync', () => {
  const [snapshot] = parseAll('ws_book_snapshot.json') as BookMessage[];
  const [update, gap] = parseAll('ws_book_update.json') as BookMessage[];
  const [badChecksum] = parseAll('ws_book_bad_checksum.json') as BookMessage[];

  test('snapshot and a chained update match the venue checksum; levels published in base units', () => {
    const sync = new BookSync(okxSwap.book, btcSwap);
    expect(sync.onMessage(update!)).toBe('ignored');
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.onMessage(update!)).toBe('applied');
    expect(sync.book.topRaw('bid', 5)).toEqual([['87000.1', '15'], ['86999.9', '30']]);
    // 15 contracts of 0.01 BTC.
    expect(toLevels(sync.book.topRaw('bid', 1), btcSwap)).toEqual([[87000.1, 0.15]]);
  });

  test('a broken seqId chain is a counted resync; the next snapshot brings the book back', () => {
    const sync = new BookSync(okxSwap.book, btcSwap);
    sync.onMessage(snapshot!);
    sync.onMessage(update!);
    expect(sync.onMessage(gap!)).toBe('gap');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
    expect(sync.onMessage(update!)).toBe('ignored');
    expect(sync.onMessage(snapshot!)).toBe('snapshot');
    expect(sync.synced).toBe(true);
  });

  test('a book that no longer matches the venue checksum is a counted resync', () => {
    const sync = new BookSync(okxSwap.book, btcSwap);
    sync.onMessage(snapshot!);
    sync.onMessage(update!);
    expect(sync.onMessage(badChecksum!)).toBe('checksum');
    expect(sync).toMatchObject({ resyncs: 1, synced: false });
  });
});

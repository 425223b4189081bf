// ccxt's unified structures read as reports for the emit path, without a socket: trades,
// liquidations and markets written here as ccxt hands them over, expected values written out.
import ccxt, { type Exchange, type Liquidation, type Market, type Trade } from 'ccxt';
import { describe, expect, test } from 'vitest';
import { ccxtListings, decimalText, liquidationCaches, liquidationReports, tradeReports, UnseenItems } from '../ccxtReports.ts';
import type { VenueMarket } from '../venue.ts';

const exchange = new (ccxt.pro as unknown as Record<string, new (config: object) => Exchange>).bitget!({});
const btc: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
const eth: VenueMarket = { symbol: 'ETHUSDT', base: 'ETH', quote: 'USDT', asset: 'ethereum', contractSize: '0.01' };
const byUnified = new Map([
  ['BTC/USDT', btc],
  ['ETH/USDT:USDT', eth],
]);
const at = Date.UTC(2026, 0, 5);

const trade = (fields: Partial<Trade>): Trade => ({ symbol: 'BTC/USDT', id: '1', timestamp: at, side: 'buy', price: 50_000, amount: 0.5, ...fields }) as Trade;
const liquidation = (fields: Partial<Liquidation>): Liquidation => ({ symbol: 'ETH/USDT:USDT', timestamp: at, side: 'sell', price: 3_000.5, contracts: 20, ...fields }) as Liquidation;

describe('trades', () => {
  test('a trade of a followed market: its venue symbol, id, decimals without exponent, side and time in whole ms', () => {
    expect(tradeReports(exchange, byUnified, [trade({ amount: 1e-7, price: 0.00001234, timestamp: at + 0.9 })], at + 50)).toEqual([
      { kind: 'trade', symbol: 'BTCUSDT', tradeId: '1', price: '0.00001234', quantity: '0.0000001', side: 'buy', ts: at },
    ]);
    expect(decimalText(exchange, 1e21)).toBe('1000000000000000000000');
  });

  test('no venue time: the receive time; other markets dropped', () => {
    expect(tradeReports(exchange, byUnified, [trade({ timestamp: undefined }), trade({ symbol: 'DOGE/USDT' }), trade({ symbol: undefined })], at + 7)).toEqual([
      { kind: 'trade', symbol: 'BTCUSDT', tradeId: '1', price: '50000', quantity: '0.5', side: 'buy', ts: at + 7 },
    ]);
  });

  test('without a venue id the content is the id; equal trades of one drain are told apart by position, counted over followed markets only', () => {
    const same = { id: undefined, side: 'sell', price: 100, amount: 2 } as Partial<Trade>;
    const reports = tradeReports(exchange, byUnified, [trade(same), trade({ ...same, symbol: 'DOGE/USDT' }), trade(same), trade({ ...same, amount: 3 }), trade({ ...same, id: '' })], at);
    expect(reports.map((r) => (r.kind === 'trade' ? r.tradeId : r.kind))).toEqual([`~${at}-sell-100-2-0`, `~${at}-sell-100-2-1`, `~${at}-sell-100-3-0`, `~${at}-sell-100-2-2`]);
  });

  test('a side that is not buy or sell, or a price or amount that is not a number, is unreadable (with its id, for the duplicate check)', () => {
    const reports = tradeReports(exchange, byUnified, [trade({ id: 'a', side: 'unknown' as Trade['side'] }), trade({ id: 'b', price: undefined as unknown as number }), trade({ id: 'c', amount: undefined })], at);
    expect(reports).toEqual(['a', 'b', 'c'].map((id) => ({ kind: 'unreadable', of: 'trade', symbol: 'BTCUSDT', id })));
  });
});

describe('liquidations', () => {
  test("the position closed follows the venue's meaning of ccxt's side; contracts as sent; the id from the content", () => {
    const sells = [liquidation({}), liquidation({ side: 'buy' })];
    expect(liquidationReports(exchange, byUnified, 'order', sells, at)).toEqual([
      { kind: 'liquidation', symbol: 'ETHUSDT', liquidationId: `${at}-sell-3000.5-20`, price: '3000.5', quantity: '20', positionSide: 'long', ts: at },
      { kind: 'liquidation', symbol: 'ETHUSDT', liquidationId: `${at}-buy-3000.5-20`, price: '3000.5', quantity: '20', positionSide: 'short', ts: at },
    ]);
    expect(liquidationReports(exchange, byUnified, 'position', sells, at).map((r) => (r.kind === 'liquidation' ? r.positionSide : r.kind))).toEqual(['short', 'long']);
  });

  test('no time: the receive time; other markets dropped; an unreadable side, price or size is unreadable', () => {
    const reports = liquidationReports(
      exchange,
      byUnified,
      'order',
      [liquidation({ timestamp: undefined }), liquidation({ symbol: 'SOL/USDT:USDT' }), liquidation({ side: undefined }), liquidation({ contracts: undefined })],
      at + 3,
    );
    expect(reports).toEqual([
      { kind: 'liquidation', symbol: 'ETHUSDT', liquidationId: `${at + 3}-sell-3000.5-20`, price: '3000.5', quantity: '20', positionSide: 'long', ts: at + 3 },
      { kind: 'unreadable', of: 'liquidation', symbol: 'ETHUSDT', id: `${at}-undefined-3000.5-20` },
      { kind: 'unreadable', of: 'liquidation', symbol: 'ETHUSDT', id: `${at}-sell-3000.5-undefined` },
    ]);
  });

  test('the liquidation cache: one array for every market, or one per market', () => {
    const one = [liquidation({})];
    expect(liquidationCaches(Object.assign(Object.create(exchange), { liquidations: one }), ['A', 'B'])).toEqual([one]);
    const perMarket = { A: [1], B: [2] };
    expect(liquidationCaches(Object.assign(Object.create(exchange), { liquidations: perMarket }), ['B', 'C'])).toEqual([[2], undefined]);
    expect(liquidationCaches(Object.assign(Object.create(exchange), { liquidations: undefined }), ['A'])).toEqual([]);
  });
});

describe('UnseenItems', () => {
  test("each cache drained from the first unseen item after the newest seen one; the answer's items too; nothing twice", () => {
    const unseen = new UnseenItems();
    const [a, b, c, d, e] = [{ n: 'a' }, { n: 'b' }, { n: 'c' }, { n: 'd' }, { n: 'e' }];
    const cacheA = [a, b];
    const cacheB = [c];
    expect(unseen.take([b], [cacheA, cacheB, undefined])).toEqual([a, b, c]);
    cacheA.push(d);
    // The cache dropped its oldest: the drain stops at the newest item already seen.
    cacheA.shift();
    expect(unseen.take(undefined, [cacheA, cacheB])).toEqual([d]);
    // An answer with items kept elsewhere, some already taken.
    expect(unseen.take([a, e, 'x', null], [])).toEqual([e]);
    expect(unseen.take([a, e], [cacheA, cacheB])).toEqual([]);
  });

  test('a cache is read back only to its newest seen item: older items never seen are left', () => {
    const unseen = new UnseenItems();
    const [a, b, c] = [{ n: 'a' }, { n: 'b' }, { n: 'c' }];
    unseen.take([b], []);
    expect(unseen.take(undefined, [[a, b, c]])).toEqual([c]);
  });
});

describe('ccxtListings', () => {
  const market = (fields: Partial<Market>): Market => ({ id: 'BTCUSDT', symbol: 'BTC/USDT', base: 'BTC', quote: 'USDT', spot: true, swap: false, active: true, ...fields }) as Market;

  test('spot venues: active spot markets, contract size 1, the unified symbol kept', () => {
    const listed = ccxtListings({ contract: 'spot' }, [market({}), market({ id: 'X', active: false }), market({ id: 'Y', spot: false, swap: true, linear: true }), market({ id: '', symbol: 'Z/USDT' }), market({ id: 'ETHUSDT', symbol: 'ETH/USDT', base: 'ETH', active: undefined })], exchange);
    expect(listed).toEqual([
      { listing: { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', contractSize: '1' }, unified: 'BTC/USDT' },
      { listing: { symbol: 'ETHUSDT', base: 'ETH', quote: 'USDT', contractSize: '1' }, unified: 'ETH/USDT' },
    ]);
  });

  test('perpetual venues: linear swaps with a known positive contract size, as a decimal; inverse ones and spot left out', () => {
    const swap = (fields: Partial<Market>) => market({ spot: false, swap: true, linear: true, inverse: false, contractSize: 0.0001, symbol: 'BTC/USDT:USDT', ...fields });
    const listed = ccxtListings({ contract: 'perpetual' }, [swap({}), swap({ id: 'I', inverse: true, linear: false }), swap({ id: 'J', inverse: true }), swap({ id: 'N', contractSize: undefined }), swap({ id: 'Z', contractSize: 0 }), market({ id: 'S' })], exchange);
    expect(listed).toEqual([{ listing: { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', contractSize: '0.0001' }, unified: 'BTC/USDT:USDT' }]);
  });
});

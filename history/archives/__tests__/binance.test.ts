import { expect, test } from 'vitest';
import { binanceArchive, binanceFuturesArchive } from '../binance.ts';
import { isRefusal, type ArchiveFormat, type ArchiveTrade } from '../format.ts';
import { isRefusedKind } from '../source.ts';
import { fixtureCells, parseFixture, tradesOf } from './parseFixture.ts';

const formatOf = (source: typeof binanceArchive, kind: string) => {
  const k = source.kinds[kind]!;
  if (isRefusedKind(k)) throw new Error(`${kind} refused`);
  return k as ArchiveFormat;
};
const trades = tradesOf;

test('spot trades of 2025-01-01: µs times cut to ms, isBuyerMaker True is a sell, every row a trade with its id', () => {
  const path = 'binance/BTCUSDT-trades-2025-01-01.first210.csv';
  const rows = parseFixture(formatOf(binanceArchive, 'trades'), path, 'BTCUSDT', '2025-01-01');
  const cells = fixtureCells(path, false);
  expect(rows).toHaveLength(210);
  expect(trades(rows)).toHaveLength(210);
  expect(rows[0]).toEqual({ market: 'BTCUSDT', tradeId: '4359935386', ts: 1735689600010, price: '93576.00000000', quantity: '0.00136000', side: 'sell' });
  // Against the file's own columns: id, price, qty, µs time (its first 13 digits), side from isBuyerMaker.
  expect(trades(rows).map((t) => [t.tradeId, t.price, t.quantity, String(t.ts), t.side])).toEqual(
    cells.map((c) => [c[0], c[1], c[2], c[4]!.slice(0, 13), c[5] === 'True' ? 'sell' : 'buy']),
  );
  expect(new Set(trades(rows).map((t) => t.side))).toEqual(new Set(['buy', 'sell']));
});

test('spot trades of 2024-12-31 are in ms, the day before the switch to µs', () => {
  const path = 'binance/BTCUSDT-trades-2024-12-31.first217.csv';
  const rows = trades(parseFixture(formatOf(binanceArchive, 'trades'), path, 'BTCUSDT', '2024-12-31'));
  expect(rows).toHaveLength(217);
  expect(rows[0]!.ts).toBe(1735603200213);
  expect(rows.map((t) => t.ts)).toEqual(fixtureCells(path, false).map((c) => Number(c[4])));
  expect(rows.every((t) => t.ts >= Date.UTC(2024, 11, 31) && t.ts < Date.UTC(2025, 0, 1))).toBe(true);
});

test('spot aggTrades: an aggTrade of one fill is that trade (id = firstId); one of several fills is refused, naming `trades`', () => {
  const path = 'binance/BTCUSDT-aggTrades-2026-01-01.first5min.csv';
  const rows = parseFixture(formatOf(binanceArchive, 'aggTrades'), path, 'BTCUSDT', '2026-01-01');
  const cells = fixtureCells(path, false);
  const single = cells.filter((c) => c[3] === c[4]);
  expect(rows).toHaveLength(1639);
  expect(single.length).toBeGreaterThan(0);
  expect(single.length).toBeLessThan(1639);
  expect(trades(rows).map((t) => [t.tradeId, t.quantity, t.side])).toEqual(single.map((c) => [c[3], c[2], c[6] === 'True' ? 'sell' : 'buy']));
  const refused = rows.filter(isRefusal);
  expect(refused).toHaveLength(1639 - single.length);
  expect(refused[0]!.refused).toMatch(/several fills.*`trades`/);
  expect(rows[0]).toEqual({ market: 'BTCUSDT', tradeId: '5723703861', ts: 1767225600039, price: '87648.21000000', quantity: '0.08185000', side: 'sell' });
});

test('USD-M aggTrades: the header is skipped, the aggTrade id is the trade id (what binance-futures collects), false is a buy', () => {
  const path = 'binance-futures/BTCUSDT-aggTrades-2026-09-17.1428utc.first150.csv';
  const format = formatOf(binanceFuturesArchive, 'aggTrades');
  expect(format.header('agg_trade_id,price,quantity,first_trade_id,last_trade_id,transact_time,is_buyer_maker')).toHaveLength(7);
  const rows = trades(parseFixture(format, path, 'BTCUSDT', '2026-09-17'));
  expect(rows).toHaveLength(150);
  expect(rows[0]).toEqual({ market: 'BTCUSDT', tradeId: '3454067270', ts: 1789655280294, price: '76988.7', quantity: '0.037', side: 'buy' });
  expect(rows.map((t) => [t.tradeId, t.ts, t.side])).toEqual(fixtureCells(path, true).map((c) => [c[0], Number(c[5]), c[6] === 'true' ? 'sell' : 'buy']));
});

test('USD-M trades are refused as a kind: their ids are not the aggTrade ids binance-futures stores', () => {
  const kind = binanceFuturesArchive.kinds.trades!;
  expect(isRefusedKind(kind) && kind.refused).toMatch(/import `aggTrades`/);
  expect(isRefusedKind(binanceArchive.kinds.trades!)).toBe(false);
});

test('file names give market, kind and period; paths are the venue site\'s', () => {
  expect(binanceArchive.parseName('BTCUSDT-trades-2024-01-01.zip')).toEqual({ market: 'BTCUSDT', kind: 'trades', period: { daily: '2024-01-01' } });
  expect(binanceArchive.parseName('BTCUSDT-aggTrades-2024-01.csv')).toEqual({ market: 'BTCUSDT', kind: 'aggTrades', period: { monthly: '2024-01' } });
  expect(binanceArchive.parseName('BTCUSDT-trades-2025-01-01.first210.csv')?.market).toBe('BTCUSDT');
  expect(binanceArchive.parseName('BTCUSDT-klines-2024-01-01.zip')).toBeUndefined();
  expect(binanceArchive.path('BTCUSDT', 'trades', { daily: '2024-01-01' })).toBe('/data/spot/daily/trades/BTCUSDT/BTCUSDT-trades-2024-01-01.zip');
  expect(binanceFuturesArchive.path('ETHUSDT', 'aggTrades', { monthly: '2024-01' })).toBe('/data/futures/um/monthly/aggTrades/ETHUSDT/ETHUSDT-aggTrades-2024-01.zip');
  expect(binanceArchive.splitSymbol('BTCUSDT')).toEqual({ base: 'BTC', quote: 'USDT' });
  expect(binanceArchive.splitSymbol('BTCFDUSD')).toEqual({ base: 'BTC', quote: 'FDUSD' });
});

test('malformed rows are refused, never thrown', () => {
  const format = formatOf(binanceArchive, 'trades');
  const context = { market: 'BTCUSDT', lineNumber: 1, period: '2024-01-01' };
  for (const line of ['4356587539,92792.05,0.00129,119.7,17356032002,False,True', '4356587539,-1,0.1,1,1735603200213,False,True', 'x,1,1,1,1735603200213,False,True', '4356587539,1,1,1,1735603200213,Maybe,True', '1,2'])
    expect(format.parse(line, context)).toEqual({ refused: 'malformed row' });
});

import { expect, test } from 'vitest';
import { bitmexArchive } from '../bitmex.ts';
import type { ArchiveFormat } from '../format.ts';

const format = bitmexArchive.kinds.trade as ArchiveFormat;
const context = { market: '', lineNumber: 2, period: '2020-05-04' };
// A row of the archive quoted in a public repository (fixtures/SOURCES.md).
const row = '2020-05-04D00:00:03.367608000,XBTUSD,Buy,1,8907.5,ZeroPlusTick,9d3d65b9-f073-ec03-eceb-61c49761ff1d,11226,0.00011226,1';

test('kdb+ timestamps to the ms, each row its own market, homeNotional the base quantity (XBT of an inverse contract)', () => {
  expect(format.header('timestamp,symbol,side,size,price,tickDirection,trdMatchID,grossValue,homeNotional,foreignNotional')).toHaveLength(10);
  expect(format.header(row)).toBeUndefined();
  expect(format.parse(row, context)).toEqual({ market: 'XBTUSD', tradeId: '9d3d65b9-f073-ec03-eceb-61c49761ff1d', ts: Date.UTC(2020, 4, 4, 0, 0, 3, 367), price: '8907.5', quantity: '1', baseQuantity: '0.00011226', side: 'buy' });
  // The later columns trdType,pool change nothing.
  expect(format.parse(`${row},Regular,`, context)).toEqual(format.parse(row, context));
  expect(format.parse(row.replace('0.00011226', ''), context)).toEqual({ refused: 'malformed row' });
});

test('one daily file of every market; names and paths', () => {
  expect(bitmexArchive.parseName('20181205.csv.gz')).toEqual({ kind: 'trade', period: { daily: '2018-12-05' } });
  expect(bitmexArchive.path('XBTUSD', 'trade', { daily: '2018-12-05' })).toBe('/public.bitmex.com/data/trade/20181205.csv.gz');
  expect(bitmexArchive.splitSymbol('XBTUSD')).toEqual({ base: 'XBT', quote: 'USD' });
  expect(bitmexArchive.splitSymbol('XBTZ18')).toBeUndefined();
});

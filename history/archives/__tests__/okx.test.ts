import { expect, test } from 'vitest';
import type { ArchiveFormat } from '../format.ts';
import { okxArchive, okxSwapArchive } from '../okx.ts';
import { periodSpan } from '../../importFile.ts';
import { fixtureCells, parseFixture, tradesOf } from './parseFixture.ts';

const trades = tradesOf;

test('the old layout (no instrument_name; side, size, price) is read by its header\'s names, glosses cut off', () => {
  const path = 'okx/BTC-USDT-aggtrades-2023-11-18.bbgo.csv';
  const rows = trades(parseFixture(okxArchive.kinds.aggtrades as ArchiveFormat, path, 'BTC-USDT', '2023-11-18'));
  expect(rows).toHaveLength(15);
  expect(rows[0]).toEqual({ market: 'BTC-USDT', tradeId: '450372093', ts: 1700239042832, price: '35910.6', quantity: '0.00418025', side: 'buy' });
  expect(rows.map((t) => [t.tradeId, t.quantity, t.price])).toEqual(fixtureCells(path, true).map((c) => [c[0], c[2], c[3]]));
});

test('the new layout with instrument_name (the research notes\' sample row)', () => {
  const format = okxSwapArchive.kinds.trades as ArchiveFormat;
  const columns = format.header('instrument_name,trade_id,side,price,size,created_time');
  expect(columns).toEqual(['instrument_name', 'trade_id', 'side', 'price', 'size', 'created_time']);
  expect(format.parse('BTC-USDT-SWAP,2802853319,sell,64927.5,0.2,1784822400188', { market: 'BTC-USDT-SWAP', lineNumber: 2, period: '2026-07-24', columns })).toEqual({
    market: 'BTC-USDT-SWAP', tradeId: '2802853319', ts: 1784822400188, price: '64927.5', quantity: '0.2', side: 'sell',
  });
});

test('a file is named for its day at UTC+8: 2023-11-18 holds 2023-11-17 16:00 UTC onwards, the fixture\'s rows inside', () => {
  const span = periodSpan({ daily: '2023-11-18' }, okxArchive.dayOffsetHours);
  expect(span).toEqual({ from: Date.UTC(2023, 10, 17, 16), to: Date.UTC(2023, 10, 18, 16) - 1 });
  const rows = trades(parseFixture(okxArchive.kinds.aggtrades as ArchiveFormat, 'okx/BTC-USDT-aggtrades-2023-11-18.bbgo.csv', 'BTC-USDT', '2023-11-18'));
  expect(rows.every((t) => t.ts >= span.from && t.ts <= span.to)).toBe(true);
  expect(rows.every((t) => t.ts < Date.UTC(2023, 10, 18))).toBe(true);
});

test('OKX kinds import under the rule for ids that are not the collector\'s (it stores orders, the archive fills)', () => {
  expect((okxArchive.kinds.trades as ArchiveFormat).identity).toBe('uncovered');
  expect(okxArchive.parseName('BTC-USDT-SWAP-trades-2026-07-01.zip')).toEqual({ market: 'BTC-USDT-SWAP', kind: 'trades', period: { daily: '2026-07-01' } });
  expect(okxArchive.parseName('BTC-USDT-aggtrades-2023-11-18.bbgo.csv')?.market).toBe('BTC-USDT');
  expect(okxArchive.path('BTC-USDT', 'trades', { daily: '2026-07-01' })).toBe('/cdn/okex/traderecords/trades/daily/20260701/BTC-USDT-trades-2026-07-01.zip');
  expect(okxArchive.path('BTC-USDT', 'trades', { monthly: '2026-07' })).toBe('/cdn/okex/traderecords/trades/monthly/202607/BTC-USDT-trades-2026-07.zip');
});

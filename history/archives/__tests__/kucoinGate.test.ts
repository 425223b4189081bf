import { expect, test } from 'vitest';
import type { ArchiveFormat } from '../format.ts';
import { gateArchive } from '../gate.ts';
import { kucoinArchive } from '../kucoin.ts';

// The sample rows of these archives quoted in research/trade-history.md (fixtures/SOURCES.md).
test('KuCoin: trade_id,trade_time (ms),price,size,side (BUY/SELL)', () => {
  const format = kucoinArchive.kinds.trades as ArchiveFormat;
  expect(format.header('trade_id,trade_time,price,size,side')).toHaveLength(5);
  expect(format.parse('8833558834331649,1715558400475,61484.1,0.0000325,BUY', { market: 'BTC-USDT', lineNumber: 2, period: '2024-05-13' })).toEqual({
    market: 'BTC-USDT', tradeId: '8833558834331649', ts: 1715558400475, price: '61484.1', quantity: '0.0000325', side: 'buy',
  });
  expect(kucoinArchive.path('BTC-USDT', 'trades', { daily: '2024-05-13' })).toBe('/data/spot/daily/trades/BTC-USDT/BTC-USDT-trades-2024-05-13.zip');
  expect(kucoinArchive.parseName('BTC-USDT-trades-2024-05-13.zip')).toEqual({ market: 'BTC-USDT', kind: 'trades', period: { daily: '2024-05-13' } });
});

test('Gate: no header, seconds with µs, side 1 = sell and 2 = buy; monthly files', () => {
  const format = gateArchive.kinds.deals as ArchiveFormat;
  const context = { market: 'BTC_USDT', lineNumber: 1, period: '2026-01' };
  const row = '1767225600.277618,152559793,87645.7,0.000057,1';
  expect(format.header(row)).toBeUndefined();
  expect(format.parse(row, context)).toEqual({ market: 'BTC_USDT', tradeId: '152559793', ts: 1767225600277, price: '87645.7', quantity: '0.000057', side: 'sell' });
  expect(format.parse(row.replace(/1$/, '2'), context)).toMatchObject({ side: 'buy' });
  expect(format.parse(row.replace(/1$/, '3'), context)).toEqual({ refused: 'malformed row' });
  expect(gateArchive.parseName('BTC_USDT-202601.csv.gz')).toEqual({ market: 'BTC_USDT', kind: 'deals', period: { monthly: '2026-01' } });
  expect(gateArchive.path('BTC_USDT', 'deals', { monthly: '2026-01' })).toBe('/spot/deals/202601/BTC_USDT-202601.csv.gz');
});

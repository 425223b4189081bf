import { expect, test } from 'vitest';
import { bybitLinearArchive, bybitSpotArchive } from '../bybit.ts';
import type { ArchiveFormat } from '../format.ts';
import { fixtureCells, parseFixture, tradesOf } from './parseFixture.ts';

const trades = tradesOf;

test('linear: seconds with a fraction to the ms, Buy/Sell the taker, trdMatchID the id, size in base units', () => {
  const path = 'bybit-linear/FXSUSDT2023-10-10.bbgo.csv';
  const rows = trades(parseFixture(bybitLinearArchive.kinds.trading as ArchiveFormat, path, 'FXSUSDT', '2023-10-10'));
  expect(rows).toHaveLength(15);
  expect(rows[0]).toEqual({ market: 'FXSUSDT', tradeId: 'f7496ecb-b174-51b9-ba56-150186ba6c27', ts: 1696982287492, price: '5.2390', quantity: '0.86', side: 'sell' });
  expect(rows.map((t) => [t.tradeId, t.quantity, t.price, t.side])).toEqual(fixtureCells(path, true).map((c) => [c[6], c[3], c[4], c[2]!.toLowerCase()]));
  // 4 decimals of seconds: 1696982389.6297 is ms 1696982389629.
  expect(rows.at(-1)!.ts).toBe(1696982389629);
});

test('spot: ids are row numbers of the file, stored as `<day>#<row>` under the rule for ids that are not the venue\'s', () => {
  const path = 'bybit/UNIUSDC_2025-05-17.csv';
  const format = bybitSpotArchive.kinds.spot as ArchiveFormat;
  expect(format.identity).toBe('uncovered');
  const rows = trades(parseFixture(format, path, 'UNIUSDC', '2025-05-17'));
  expect(rows).toHaveLength(219);
  expect(rows[0]).toEqual({ market: 'UNIUSDC', tradeId: '2025-05-17#1', ts: 1747442146179, price: '6.016', quantity: '0.76', side: 'sell' });
  expect(rows.map((t) => [t.tradeId, t.ts, t.side])).toEqual(fixtureCells(path, true).map((c) => [`2025-05-17#${c[0]}`, Number(c[1]), c[4]]));
});

test('names and paths of public.bybit.com', () => {
  expect(bybitLinearArchive.parseName('BTCUSDT2025-01-01.csv.gz')).toEqual({ market: 'BTCUSDT', kind: 'trading', period: { daily: '2025-01-01' } });
  expect(bybitSpotArchive.parseName('BTCUSDT_2025-05-17.csv.gz')).toEqual({ market: 'BTCUSDT', kind: 'spot', period: { daily: '2025-05-17' } });
  expect(bybitLinearArchive.path('BTCUSDT', 'trading', { daily: '2025-01-01' })).toBe('/trading/BTCUSDT/BTCUSDT2025-01-01.csv.gz');
  expect(bybitSpotArchive.path('BTCUSDT', 'spot', { daily: '2025-05-17' })).toBe('/spot/BTCUSDT/BTCUSDT_2025-05-17.csv.gz');
});

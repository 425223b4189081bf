// An archive's market as the collector knows it: the catalog's asset, or, when discovering, the
// discovered asset the collector stores the same venue ticker under.
import { expect, test } from 'vitest';
import { binanceArchive } from '../archives/binance.ts';
import { resolveMarket } from '../markets.ts';

test('a mapped base resolves to its catalog id, discovering or not', () => {
  expect(resolveMarket(binanceArchive, 'BTCUSDT')).toMatchObject({ venue: 'binance', symbol: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', contractSize: '1' });
  expect(resolveMarket(binanceArchive, 'BTCUSDT', undefined, true)).toMatchObject({ asset: 'bitcoin' });
});

test('an unmapped base is refused, or when discovering imported under the id the collector uses (ticker--venue)', () => {
  expect(resolveMarket(binanceArchive, 'NOTACOINUSDT')).toEqual({ refused: 'market NOTACOINUSDT: the catalog maps no asset to NOTACOIN on binance' });
  expect(resolveMarket(binanceArchive, 'NOTACOINUSDT', undefined, true)).toMatchObject({ asset: 'notacoin--binance', quote: 'USDT' });
  // A quote the venue does not follow stays refused.
  expect(resolveMarket(binanceArchive, 'NOTACOINTRY', undefined, true)).toHaveProperty('refused');
});

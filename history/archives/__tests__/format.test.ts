import { expect, test } from 'vitest';
import { epochMsOrUs, epochSeconds, kdbTimestamp, positive } from '../format.ts';

test('times in the venues\' notations, to the ms, cut and never rounded up', () => {
  expect(epochMsOrUs('1735603200213')).toBe(1735603200213);
  expect(epochMsOrUs('1735689600010866')).toBe(1735689600010);
  expect(epochMsOrUs('1735689600010999')).toBe(1735689600010);
  expect(epochMsOrUs('173568960001')).toBeUndefined();
  expect(epochMsOrUs('17356896000109')).toBeUndefined();
  expect(epochSeconds('1696982287.4922')).toBe(1696982287492);
  expect(epochSeconds('1696982287.5')).toBe(1696982287500);
  expect(epochSeconds('1696982287')).toBe(1696982287000);
  expect(epochSeconds('1767225600.277618')).toBe(1767225600277);
  expect(epochSeconds('-1.5')).toBeUndefined();
  expect(kdbTimestamp('2018-12-05D00:00:25.948313000')).toBe(Date.UTC(2018, 11, 5, 0, 0, 25, 948));
  expect(kdbTimestamp('2018-12-05D23:59:59.999999999')).toBe(Date.UTC(2018, 11, 5, 23, 59, 59, 999));
  expect(kdbTimestamp('2018-12-05T00:00:25.948Z')).toBeUndefined();
});

test('prices and quantities: positive finite decimals only', () => {
  expect(positive('87648.21000000')).toBe('87648.21000000');
  expect(positive('4.50554e+08')).toBe('4.50554e+08');
  for (const bad of ['0', '0.000', '-1', 'NaN', 'Infinity', '', undefined, '1,5', '1e999']) expect(positive(bad)).toBeUndefined();
});

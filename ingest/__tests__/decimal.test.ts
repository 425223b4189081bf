import fc from 'fast-check';
import { expect, test } from 'vitest';
import { decimalProduct, decimalProductOver } from '../decimal.ts';

test('contract sizes times contract values, exactly, rounded once', () => {
  expect(decimalProduct('12', '0.1')).toBe(1.2);
  expect(decimalProduct('3', '0.1')).toBe(0.3);
  expect(decimalProduct('35', '0.01')).toBe(0.35);
  expect(decimalProduct('0.5', '10000000')).toBe(5_000_000);
  expect(decimalProduct('-2.5', '0.4')).toBe(-1);
  expect(decimalProduct('0.01520000', '1')).toBe(0.0152);
  expect(decimalProduct('.5', '2.')).toBe(1);
  for (const bad of ['', '.', '1e5', 'abc', '1.2.3']) expect(decimalProduct(bad, '0.1')).toBeNaN();
});

test('equals the decimal literal of the exact product, which JS rounds correctly to the nearest double', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 0, max: 10 }), fc.bigInt({ min: 1n, max: 10n ** 6n }), fc.integer({ min: 0, max: 8 }), (a, aScale, b, bScale) => {
      const text = (digits: bigint, scale: number) => {
        const s = digits.toString().padStart(scale + 1, '0');
        return scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
      };
      // Independent oracle: the product's digits and power of ten written as one literal.
      expect(decimalProduct(text(a, aScale), text(b, bScale))).toBe(Number(`${a * b}e-${aScale + bScale}`));
    }),
  );
});

test('inverse contracts: contracts x quote per contract / price, exactly, rounded once', () => {
  expect(decimalProductOver('1200', '1', '97010.5')).toBe(1200 / 97010.5);
  expect(decimalProductOver('100', '1', '50000')).toBe(0.002);
  expect(decimalProductOver('3', '0.1', '1')).toBe(0.3);
  expect(decimalProductOver('-10', '1', '4')).toBe(-2.5);
  expect(decimalProductOver('0', '1', '4')).toBe(0);
  for (const [a, b, c] of [['1', '1', '0'], ['1', '1', 'x'], ['1e3', '1', '2']] as const) expect(decimalProductOver(a, b, c)).toBeNaN();
});

test('inverse quotient: no double is nearer to the exact value (checked with exact rationals)', () => {
  // A double as an exact fraction p / 2^k.
  const exact = (d: number): [bigint, bigint] => {
    let k = 0n;
    let x = d;
    while (!Number.isInteger(x)) {
      x *= 2;
      k += 1n;
    }
    return [BigInt(x), 1n << k];
  };
  const next = (d: number, dir: 1 | -1) => {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, d);
    view.setBigUint64(0, view.getBigUint64(0) + BigInt(dir));
    return view.getFloat64(0);
  };
  const abs = (v: bigint) => (v < 0n ? -v : v);
  fc.assert(
    fc.property(fc.bigInt({ min: 1n, max: 10n ** 9n }), fc.integer({ min: 0, max: 4 }), fc.bigInt({ min: 1n, max: 10n ** 9n }), fc.integer({ min: 0, max: 6 }), (a, aScale, p, pScale) => {
      const text = (digits: bigint, scale: number) => {
        const s = digits.toString().padStart(scale + 1, '0');
        return scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
      };
      const got = decimalProductOver(text(a, aScale), '1', text(p, pScale));
      // Exact value a/10^aScale / (p/10^pScale) = (a * 10^pScale) / (p * 10^aScale).
      const num = a * 10n ** BigInt(pScale);
      const den = p * 10n ** BigInt(aScale);
      // |d - num/den| compared as fractions over a common denominator.
      const distance = (d: number) => {
        const [n, k] = exact(d);
        return [abs(n * den - num * k), k * den] as const;
      };
      const [gd, gk] = distance(got);
      for (const other of [next(got, 1), next(got, -1)]) {
        const [od, ok] = distance(other);
        expect(gd * ok <= od * gk).toBe(true);
      }
    }),
  );
});

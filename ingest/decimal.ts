// Venues send prices and sizes as decimal strings. Converting contracts to base units multiplies two
// of them; doing it in binary floating point would add an error on top of the one rounding that
// turning a decimal into a double already costs (3 x 0.1 = 0.30000000000000004).

const decimalPattern = /^(-?)(\d*)(?:\.(\d*))?$/;

/** A decimal string as an integer and a power of ten: "12.50" -> { digits: 1250n, scale: 2 }. */
function parse(text: string): { digits: bigint; scale: number } | undefined {
  const m = decimalPattern.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const fraction = m[3] ?? '';
  const digits = BigInt(`${m[2] || '0'}${fraction}`);
  return { digits: m[1] === '-' ? -digits : digits, scale: fraction.length };
}

/**
 * `a x b` for two decimal strings, computed exactly and rounded once to the nearest double.
 * NaN when either is not a plain decimal (no exponents: venues do not send them).
 */
export function decimalProduct(a: string, b: string): number {
  if (b === '1') return Number(a);
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return Number.NaN;
  const product = x.digits * y.digits;
  const scale = x.scale + y.scale;
  if (scale === 0) return Number(product);
  const negative = product < 0n;
  const text = (negative ? -product : product).toString().padStart(scale + 1, '0');
  return Number(`${negative ? '-' : ''}${text.slice(0, -scale)}.${text.slice(-scale)}`);
}

/** The double nearest to `num / den` (positive BigInts), ties to even: the one rounding of an exact quotient. */
function nearestDouble(num: bigint, den: bigint): number {
  // Scale by 2^-e so that the integer quotient has exactly 53 bits, then round on the remainder.
  let e = num.toString(2).length - den.toString(2).length - 53;
  for (;;) {
    const n = e < 0 ? num << BigInt(-e) : num;
    const d = e > 0 ? den << BigInt(e) : den;
    let q = n / d;
    if (q >= 1n << 53n) e += 1;
    else if (q < 1n << 52n) e -= 1;
    else {
      const twice = 2n * (n % d);
      if (twice > d || (twice === d && (q & 1n) === 1n)) q += 1n;
      return Number(q) * 2 ** e;
    }
  }
}

/**
 * `a x b / c` for decimal strings, computed exactly and rounded once to the nearest double: inverse
 * contracts count in the quote currency, so base units are contracts x contract value / price.
 * NaN when any is not a plain decimal or `c` is zero.
 */
export function decimalProductOver(a: string, b: string, c: string): number {
  const x = parse(a);
  const y = parse(b);
  const z = parse(c);
  if (!x || !y || !z || z.digits === 0n) return Number.NaN;
  // (x.digits * y.digits / 10^(xs+ys)) / (z.digits / 10^zs)
  let num = x.digits * y.digits * 10n ** BigInt(z.scale);
  let den = z.digits * 10n ** BigInt(x.scale + y.scale);
  const negative = num < 0n !== den < 0n && num !== 0n;
  if (num < 0n) num = -num;
  if (den < 0n) den = -den;
  if (num === 0n) return 0;
  const value = nearestDouble(num, den);
  return negative ? -value : value;
}

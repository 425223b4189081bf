// A token supply read from a chain (uint256 base units) as whole tokens.
import { describe, expect, test } from 'vitest';
import { wholeTokens } from '../assetUniverse.ts';

describe('wholeTokens', () => {
  test('a round supply stays round, whatever its size in base units', () => {
    // Past 2^53 base units a double cannot hold the raw figure: dividing it rounded this one off.
    expect(wholeTokens(1_413_351_431n * 10n ** 18n, 18)).toBe(1_413_351_431);
    expect(wholeTokens(9_999_999_999n * 10n ** 18n, 18)).toBe(9_999_999_999);
    expect(wholeTokens(42_000_000n, 6)).toBe(42);
  });

  test('the fraction below a whole token is kept, and no decimals is the raw figure', () => {
    expect(wholeTokens(1_000_000n * 10n ** 18n + 5n * 10n ** 17n, 18)).toBe(1_000_000.5);
    expect(wholeTokens(1n, 6)).toBe(0.000001);
    expect(wholeTokens(123n, 0)).toBe(123);
    expect(wholeTokens(0n, 18)).toBe(0);
  });
});

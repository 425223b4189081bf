import { describe, expect, test } from 'vitest';
import { weightedMedian } from '../fxMeasured.ts';

// Each expected value is worked out by hand: sort by value, add the weights up, and stop at the
// first value where the running sum reaches half of the total.

describe('weightedMedian: the first value whose cumulative weight reaches half of the total', () => {
  test('values are taken in ascending order, whatever the input order', () => {
    // Sorted: 10 (1), 20 (5), 30 (1); total 7, half 3.5; running sums 1, 6: stops at 20.
    expect(weightedMedian([{ value: 30, weight: 1 }, { value: 10, weight: 1 }, { value: 20, weight: 5 }])).toBe(20);
  });

  test('a heavy value outweighs the middle one', () => {
    // Sorted: 1 (1), 2 (1), 3 (1), 4 (5); total 8, half 4; running sums 1, 2, 3, 8: stops at 4, not at 2 or 3.
    expect(weightedMedian([{ value: 2, weight: 1 }, { value: 4, weight: 5 }, { value: 1, weight: 1 }, { value: 3, weight: 1 }])).toBe(4);
  });

  test('reaching exactly half stops there: of two equal weights, the lower value', () => {
    // Sorted: 1 (1), 3 (1); total 2, half 1; the running sum is 1 at value 1.
    expect(weightedMedian([{ value: 3, weight: 1 }, { value: 1, weight: 1 }])).toBe(1);
  });
});

describe('weightedMedian: only positive weights count', () => {
  test('no point, or only points of zero weight: no median', () => {
    expect(weightedMedian([])).toBeUndefined();
    expect(weightedMedian([{ value: 1, weight: 0 }, { value: 2, weight: 0 }])).toBeUndefined();
  });

  test('a negative weight is left out, not subtracted', () => {
    // Without 1 (-5): only 2 (1), the median. Subtracting it would leave a total of -4 that no running sum reaches.
    expect(weightedMedian([{ value: 1, weight: -5 }, { value: 2, weight: 1 }])).toBe(2);
  });
});

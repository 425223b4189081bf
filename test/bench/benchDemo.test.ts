// The benches' arithmetic (benchDemo.ts), against figures worked by hand.
import { describe, expect, it } from 'vitest';
import { histogramBucketsOf, histogramQuantileBetween, indexLagOf, logLevelOf, quantile, slopePerMinute, slopeVerdict, slopeWithMarginPerMinute, threadHeapsMbOf } from './benchDemo.ts';

describe('slopePerMinute', () => {
  const minute = 60_000;

  it('is the rise a minute of samples on a line, whatever their spacing', () => {
    // 1,000 MB at minute 0, 3 MB more each minute, sampled at minutes 0, 1, 5 and 10.
    const samples = [0, 1, 5, 10].map((m) => ({ at: 1_700_000_000_000 + m * minute, value: 1_000 + 3 * m }));
    expect(slopePerMinute(samples)).toBeCloseTo(3, 9);
  });

  it('is the least-squares line through noisy samples, not the first and last', () => {
    // Minutes 0..4 at 10, 30, 10, 30, 10: the ends are equal (first-to-last: 0), the least-squares
    // slope is sum((t - 2)(v - 18)) / sum((t - 2)^2) = (16 - 12 + 0 + 12 - 16) / 10 = 0; shifting the
    // last sample up by 10 adds (4 - 2) * 10 / 10 = 2.
    const noisy = [10, 30, 10, 30, 10].map((value, m) => ({ at: m * minute, value }));
    expect(slopePerMinute(noisy)).toBeCloseTo(0, 9);
    expect(slopePerMinute(noisy.map((s, m) => (m === 4 ? { ...s, value: 20 } : s)))).toBeCloseTo(2, 9);
  });

  it('is NaN for fewer than two samples', () => {
    expect(slopePerMinute([])).toBeNaN();
    expect(slopePerMinute([{ at: 0, value: 5 }])).toBeNaN();
  });
});

describe('slopeWithMarginPerMinute', () => {
  const minute = 60_000;

  it('has no margin for samples on a line, and the standard error worked by hand for scattered ones', () => {
    const line = [0, 1, 2, 3].map((m) => ({ at: m * minute, value: 50 + 2 * m }));
    expect(slopeWithMarginPerMinute(line)).toEqual({ slope: expect.closeTo(2, 9), margin: expect.closeTo(0, 9) });
    // Minutes 0..4 at 0, 2, 0, 2, 0: mean 0.8, slope sum((t - 2)(v - 0.8)) / 10 = (1.6 - 1.2 + 0 + 1.2 - 1.6) / 10 = 0;
    // residuals -0.8, 1.2, -0.8, 1.2, -0.8, squared 0.64 + 1.44 + 0.64 + 1.44 + 0.64 = 4.8;
    // standard error sqrt(4.8 / (5 - 2) / 10) = 0.4, margin t(3 degrees) 3.182 · 0.4 = 1.2728.
    const scattered = [0, 2, 0, 2, 0].map((value, m) => ({ at: m * minute, value }));
    const { slope, margin } = slopeWithMarginPerMinute(scattered);
    expect(slope).toBeCloseTo(0, 9);
    expect(margin).toBeCloseTo(1.2728, 9);
  });

  it('keeps minutes as its unit when samples are seconds apart', () => {
    // The same five values 30 s apart: the slope is still 0, the standard error per minute twice
    // as wide (the span is half as long): 0.8 a minute, margin 3.182 · 0.8 = 2.5456.
    const scattered = [0, 2, 0, 2, 0].map((value, i) => ({ at: i * 30_000, value }));
    expect(slopeWithMarginPerMinute(scattered).margin).toBeCloseTo(2.5456, 9);
  });

  it('takes t for the degrees of freedom: 1.96 + 2.4 / 58 for 60 samples', () => {
    // 60 samples alternating 0 and 2 a minute apart: slope 0 up to the alternation's tilt; the
    // margin over the standard error is t, whatever the scatter.
    const alternating = Array.from({ length: 60 }, (_, m) => ({ at: m * minute, value: (m % 2) * 2 }));
    const n = alternating.length;
    const meanAt = (n - 1) / 2;
    const variance = alternating.reduce((sum, s) => sum + (s.at / minute - meanAt) ** 2, 0);
    const { slope, margin } = slopeWithMarginPerMinute(alternating);
    const residuals = alternating.reduce((sum, s) => sum + (s.value - 1 - slope * (s.at / minute - meanAt)) ** 2, 0);
    expect(margin / Math.sqrt(residuals / (n - 2) / variance)).toBeCloseTo(1.96 + 2.4 / 58, 9);
  });

  it('has no margin under three samples', () => {
    expect(slopeWithMarginPerMinute([{ at: 0, value: 1 }, { at: minute, value: 3 }])).toEqual({ slope: expect.closeTo(2, 9), margin: NaN });
    expect(slopeWithMarginPerMinute([])).toEqual({ slope: NaN, margin: NaN });
  });
});

describe('slopeVerdict', () => {
  it('passes or fails only when the whole interval is on one side of the bound', () => {
    expect(slopeVerdict({ slope: 0.1, margin: 0.1 }, 0.25)).toBe('PASS');
    expect(slopeVerdict({ slope: 0.5, margin: 0.2 }, 0.25)).toBe('FAIL');
    expect(slopeVerdict({ slope: 0.2, margin: 0.1 }, 0.25)).toBe('NOT SHOWN');
    expect(slopeVerdict({ slope: 0.3, margin: 0.1 }, 0.25)).toBe('NOT SHOWN');
    expect(slopeVerdict({ slope: -1, margin: NaN }, 0.25)).toBe('NOT SHOWN');
  });
});

describe('quantile', () => {
  it('takes the nearest rank at or below, from unsorted values', () => {
    const values = [9, 1, 8, 2, 7, 3, 6, 4, 5, 10];
    expect(quantile(values, 0.5)).toBe(6);
    expect(quantile(values, 0.99)).toBe(10);
    expect(quantile(values, 0)).toBe(1);
    expect(quantile([], 0.5)).toBeNaN();
  });
});

describe('indexLagOf', () => {
  it('reads the gauge, and is undefined while it is absent (no second computed yet)', () => {
    expect(indexLagOf('mds_index_lag_seconds 2.75\nmds_index_lag_seconds_other 9\n')).toBe(2.75);
    expect(indexLagOf('# HELP mds_index_lag_seconds the lag\nmds_bus_dropped_total 0\n')).toBeUndefined();
  });
});

describe('histogramBucketsOf and histogramQuantileBetween', () => {
  // As prom-client writes a histogram with one label besides le.
  const text = (kept: number[], read: number[]) =>
    [0.5, 1, 2, '+Inf'].flatMap((le, i) => [`mds_index_step_seconds_bucket{le="${le}",windows="kept"} ${kept[i]}`, `mds_index_step_seconds_bucket{le="${le}",windows="read"} ${read[i]}`]).join('\n') +
    '\nmds_index_step_seconds_sum{windows="kept"} 12\nmds_index_step_seconds_count{windows="kept"} 9\n';

  it("reads one label's cumulative buckets, or the sum over every label", () => {
    expect(histogramBucketsOf(text([5, 8, 9, 9], [0, 1, 2, 2]), 'mds_index_step_seconds', 'windows="read"')).toEqual([{ le: 0.5, count: 0 }, { le: 1, count: 1 }, { le: 2, count: 2 }, { le: Infinity, count: 2 }]);
    expect(histogramBucketsOf(text([5, 8, 9, 9], [0, 1, 2, 2]), 'mds_index_step_seconds').map((b) => b.count)).toEqual([5, 9, 11, 11]);
    expect(histogramBucketsOf('mds_other_bucket{le="1"} 3\n', 'mds_index_step_seconds')).toEqual([]);
  });

  it('takes the bucket of the quantile over the observations between two readings', () => {
    const before = histogramBucketsOf(text([5, 8, 9, 9], [0, 0, 0, 0]), 'mds_index_step_seconds', 'windows="kept"');
    // 100 more: 90 under 0.5 s, 9 in (0.5, 1], 1 in (1, 2].
    const after = histogramBucketsOf(text([95, 107, 109, 109], [0, 0, 0, 0]), 'mds_index_step_seconds', 'windows="kept"');
    expect(histogramQuantileBetween(before, after, 0.5)).toBe(0.5);
    expect(histogramQuantileBetween(before, after, 0.9)).toBe(0.5);
    expect(histogramQuantileBetween(before, after, 0.95)).toBe(1);
    expect(histogramQuantileBetween(before, after, 0.995)).toBe(2);
    // From the start, the first 9 count too: 14 of 109 above 0.5 s, 2 above 1 s.
    expect(histogramQuantileBetween([], after, 0.95)).toBe(1);
    expect(histogramQuantileBetween(after, after, 0.5)).toBeNaN();
  });
});

describe('logLevelOf', () => {
  it("reads a pino line's level, and 0 for a line that is not one", () => {
    // A line as the demo writes it (its log of this session, trimmed).
    expect(logLevelOf('{"level":50,"time":1796465005000,"role":"demo","part":"index","msg":"index step failed"}')).toBe(50);
    expect(logLevelOf('{"level":40,"time":1796465005000,"role":"demo","msg":"trades stored after the index passed their seconds"}')).toBe(40);
    expect(logLevelOf('Node.js v24.21.0')).toBe(0);
    expect(logLevelOf('')).toBe(0);
  });
});

describe('threadHeapsMbOf', () => {
  // Lines as infra/metrics.ts writes them, the threads in any order, another series between them.
  const metrics = [
    '# TYPE mds_thread_heap_bytes gauge',
    'mds_thread_heap_bytes{thread="main",kind="total"} 209715200',
    'mds_thread_heap_bytes{thread="main",kind="external"} 1048576',
    'mds_store_memory_bytes{part="tracked"} 5',
    'mds_thread_heap_bytes{thread="ingest",kind="external"} 3145728',
    'mds_thread_heap_bytes{thread="ingest",kind="total"} 104857600',
    'mds_thread_heap_bytes{thread="ingest",kind="totally"} 1',
  ].join('\n');

  it("reads one kind's figure of every thread, in MB", () => {
    expect(threadHeapsMbOf(metrics, 'total')).toEqual({ main: 200, ingest: 100 });
    expect(threadHeapsMbOf(metrics, 'external')).toEqual({ main: 1, ingest: 3 });
  });

  it('is empty for a kind no line has', () => {
    expect(threadHeapsMbOf(metrics, 'malloced')).toEqual({});
  });
});

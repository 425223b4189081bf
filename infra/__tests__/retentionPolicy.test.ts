// STORE_RETENTION_DAYS as the operator writes it: what is accepted, what stops the start with a
// message naming the entry, and the TTL each table then gets (infra/retention.ts).
import { expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';
import { ttlExpression, ttlOf } from '../retention.ts';
import { parseRetentionDays, retentionOf, retentionTables } from '../retentionPolicy.ts';

test('table=days entries, spaces and empty entries allowed; unset names none', () => {
  expect(parseRetentionDays('trades=365, market_seconds = 90,,')).toEqual({ trades: 365, market_seconds: 90 });
  expect(parseRetentionDays('')).toEqual({});
  expect(loadConfig({}).STORE_RETENTION_DAYS).toEqual({});
  expect(loadConfig({ STORE_RETENTION_DAYS: 'candles_1m=30,sink_intents=3' }).STORE_RETENTION_DAYS).toEqual({ candles_1m: 30, sink_intents: 3 });
});

test('a wrong entry stops the start, the variable, its value and the fault named', () => {
  const refused: [string, RegExp][] = [
    ['tardes=30', /unknown table "tardes"; tables with a retention: trades, candles_1m/],
    ['api_keys=30', /unknown table "api_keys"/],
    ['trades=abc', /"trades=abc" is not table=days/],
    ['trades=1.5', /"trades=1.5" is not table=days/],
    ['trades=-1', /"trades=-1" is not table=days/],
    ['trades=0', /trades=0: at least 1 day \(a whole number\)/],
    ['trades=99999999999999999999', /trades=99999999999999999999: at least 1 day/],
    ['market_seconds=1', /market_seconds=1: at least 2 days/],
    ['index_ticks=1', /index_ticks=1: at least 2 days/],
    ['trades', /"trades" is not table=days/],
    ['trades=30,trades=60', /trades is named twice/],
    ['index_ticks_by_time=30', /index_ticks_by_time keeps what index_ticks keeps: name index_ticks/],
  ];
  for (const [value, message] of refused) {
    const attempt = () => loadConfig({ STORE_RETENTION_DAYS: value });
    expect(attempt, value).toThrow(ConfigError);
    expect(attempt, value).toThrow(`STORE_RETENTION_DAYS=${JSON.stringify(value)}: `);
    expect(attempt, value).toThrow(message);
  }
  // The smallest accepted values.
  expect(parseRetentionDays('trades=1,market_seconds=2,index_ticks=2')).toEqual({ trades: 1, market_seconds: 2, index_ticks: 2 });
});

test('defaults: every table kept for ever but sink_intents (one day) and index_recompute_requests (30 days), as their migrations say; a named table overrides', () => {
  const defaults = retentionOf({});
  expect(Object.keys(defaults).sort()).toEqual(Object.keys(retentionTables).sort());
  const bookkeeping: Record<string, number> = { sink_intents: 1, index_recompute_requests: 30 };
  for (const [table, days] of Object.entries(defaults)) expect(days, table).toBe(bookkeeping[table]);
  expect(retentionOf({ trades: 30, sink_intents: 2 })).toMatchObject({ trades: 30, sink_intents: 2, candles_1m: undefined });
  // The time-sorted copy of index_ticks keeps what index_ticks keeps.
  expect(retentionOf({ index_ticks: 30 })).toMatchObject({ index_ticks: 30, index_ticks_by_time: 30 });
});

test('the TTL of a retention, as ClickHouse shows it back, and the TTL read out of engine_full', () => {
  expect(ttlExpression('trades', 30)).toBe('toDateTime(ts) + toIntervalDay(30)');
  expect(ttlExpression('candles_1h', 400)).toBe('bucket + toIntervalDay(400)');
  expect(ttlExpression('sink_intents', 1)).toBe('toDateTime(written_at) + toIntervalDay(1)');
  expect(() => ttlExpression('trades', 0)).toThrow(/not a whole number of days/);
  expect(() => ttlExpression('trades', 1.5)).toThrow(/not a whole number of days/);
  expect(ttlOf("ReplacingMergeTree PARTITION BY toYYYYMM(ts) ORDER BY (asset, ts) TTL toDateTime(ts) + toIntervalDay(30) SETTINGS non_replicated_deduplication_window = 1000")).toBe('toDateTime(ts) + toIntervalDay(30)');
  expect(ttlOf('MergeTree PARTITION BY toDate(written_at) ORDER BY (topic) TTL toDateTime(written_at) + toIntervalDay(1)')).toBe('toDateTime(written_at) + toIntervalDay(1)');
  expect(ttlOf('ReplacingMergeTree PARTITION BY toYYYYMM(ts) ORDER BY (asset, ts) SETTINGS index_granularity = 8192')).toBeUndefined();
});

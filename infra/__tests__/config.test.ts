import { expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';

test('defaults for an empty environment', () => {
  const config = loadConfig({});
  expect(config).toMatchObject({ PORT: 8080, MDS_DATA_DIR: './data', QUOTA_PER_HOUR: 600, MDS_SIMULATED: false });
  expect(config.CLICKHOUSE_URL).toBeUndefined();
  expect(config.KAFKA_BROKERS).toBeUndefined();
});

test('lists of brokers are split and checked', () => {
  expect(loadConfig({ KAFKA_BROKERS: 'a:9092, b:9093' }).KAFKA_BROKERS).toEqual(['a:9092', 'b:9093']);
});

test('a wrong value stops start-up with a message naming each wrong variable', () => {
  const attempt = () => loadConfig({ PORT: 'eighty', KAFKA_BROKERS: 'no-port', REDIS_URL: 'not a url' });
  expect(attempt).toThrow(ConfigError);
  expect(attempt).toThrow(/PORT="eighty"/);
  expect(attempt).toThrow(/KAFKA_BROKERS="no-port": must be host:port/);
  expect(attempt).toThrow(/REDIS_URL="not a url"/);
});

test('the Kafka session timeout stays within what brokers accept by default (6 s to 30 min)', () => {
  expect(loadConfig({}).KAFKA_SESSION_TIMEOUT_MS).toBe(30_000);
  expect(loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '6000' }).KAFKA_SESSION_TIMEOUT_MS).toBe(6_000);
  expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '5999' })).toThrow(/KAFKA_SESSION_TIMEOUT_MS="5999"/);
  expect(() => loadConfig({ KAFKA_SESSION_TIMEOUT_MS: '1800001' })).toThrow(/KAFKA_SESSION_TIMEOUT_MS="1800001"/);
});

test("the HTTP headers timeout may not exceed the request timeout (Node's http.Server refuses it)", () => {
  expect(loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '30000', HTTP_REQUEST_TIMEOUT_MS: '30000' }).HTTP_HEADERS_TIMEOUT_MS).toBe(30_000);
  const attempt = () => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '30001', HTTP_REQUEST_TIMEOUT_MS: '30000' });
  expect(attempt).toThrow(ConfigError);
  expect(attempt).toThrow(/HTTP_HEADERS_TIMEOUT_MS="30001": must be at most HTTP_REQUEST_TIMEOUT_MS \(30000\)/);
  // Against the request timeout's default.
  expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS="40000": must be at most HTTP_REQUEST_TIMEOUT_MS \(30000\)/);
});

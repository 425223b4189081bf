// The caps on an exposed port's connections (infra/connectionLimits.ts), without sockets: what one
// address and all of them may hold, the operator's loopback reserve, the default cap taken from the
// open-file limit, and one log line per burst of refusals. The same rules on a real port, under a
// flood, are in api/__tests__/connectionLimits.system.test.ts.
import { pino } from 'pino';
import { afterEach, expect, test, vi } from 'vitest';
import { addressGroup, ConnectionCounter, httpServerOptions, maxConnectionsOf, openFileLimit, RefusalBurst, WaitingConnections } from '../connectionLimits.ts';
import { loadConfig } from '../config.ts';

afterEach(() => void vi.useRealTimers());

/** Admits `count` connections from `address`; returns what each was told. */
const admitMany = (counter: ConnectionCounter, address: string, count: number) => Array.from({ length: count }, () => counter.admit(address));

test('one address holds at most its cap; a closed connection frees its place', () => {
  const counter = new ConnectionCounter({ maxConnections: 100, maxPerAddress: 3 });
  expect(admitMany(counter, '203.0.113.7', 4)).toEqual([undefined, undefined, undefined, 'max_per_address']);
  expect(counter.open).toBe(3);
  // Another address is not held back by the first.
  expect(counter.admit('203.0.113.8')).toBeUndefined();
  counter.release('203.0.113.7');
  expect(counter.admit('203.0.113.7')).toBeUndefined();
  expect(counter.admit('203.0.113.7')).toBe('max_per_address');
  expect(counter.open).toBe(4);
});

test('all addresses together hold at most the total cap; a refusal is not counted', () => {
  const counter = new ConnectionCounter({ maxConnections: 5, maxPerAddress: 2 });
  const answers = ['198.51.100.1', '198.51.100.2', '198.51.100.3'].flatMap((address) => admitMany(counter, address, 2));
  expect(answers).toEqual([undefined, undefined, undefined, undefined, undefined, 'max_connections']);
  expect(counter.open).toBe(5);
  expect(counter.admit('198.51.100.4')).toBe('max_connections');
  counter.release('198.51.100.1');
  expect(counter.admit('198.51.100.4')).toBeUndefined();
});

test('loopback is not capped per address and has 16 connections beyond the total cap, for the operator', () => {
  const counter = new ConnectionCounter({ maxConnections: 4, maxPerAddress: 1 });
  expect(admitMany(counter, '192.0.2.1', 1)).toEqual([undefined]);
  expect(admitMany(counter, '192.0.2.2', 3)).toEqual([undefined, 'max_per_address', 'max_per_address']);
  expect(admitMany(counter, '192.0.2.3', 1)).toEqual([undefined]);
  expect(admitMany(counter, '127.0.0.1', 1)).toEqual([undefined]);
  // The cap (4) is reached: other addresses are refused, loopback goes on up to 4 + 16.
  expect(counter.admit('192.0.2.4')).toBe('max_connections');
  expect(admitMany(counter, '::1', 15).every((answer) => answer === undefined)).toBe(true);
  expect(admitMany(counter, '::ffff:127.0.0.1', 2)).toEqual([undefined, 'max_connections']);
  expect(counter.open).toBe(20);
});

test('an IPv4 address counts the same whether or not it comes IPv4-mapped; an IPv6 client counts per /64', () => {
  const counter = new ConnectionCounter({ maxConnections: 100, maxPerAddress: 2 });
  expect([counter.admit('203.0.113.9'), counter.admit('::ffff:203.0.113.9'), counter.admit('203.0.113.9')]).toEqual([undefined, undefined, 'max_per_address']);
  expect([counter.admit('2001:db8:1:2::1'), counter.admit('2001:db8:1:2:ffff:ffff:ffff:fffe'), counter.admit('2001:db8:1:2::9')]).toEqual([undefined, undefined, 'max_per_address']);
  // The next /64 is another client.
  expect(counter.admit('2001:db8:1:3::1')).toBeUndefined();
  counter.release('2001:db8:1:2::1');
  expect(counter.admit('2001:0db8:0001:0002:0:0:0:7')).toBeUndefined();
});

test('address groups: IPv4 as is, IPv6 as its /64 whatever its spelling', () => {
  expect(addressGroup('192.0.2.10')).toBe('192.0.2.10');
  expect(addressGroup('::ffff:192.0.2.10')).toBe('192.0.2.10');
  expect(addressGroup('::FFFF:192.0.2.10')).toBe('192.0.2.10');
  expect(addressGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
  expect(addressGroup('2001:0DB8:0000:0000:1:2:3:4')).toBe('2001:db8:0:0::/64');
  // '::' in the middle stands for one zero group here: the fourth group is the 1 after it.
  expect(addressGroup('2001:db8:5::1:2:3:4')).toBe('2001:db8:5:0::/64');
  expect(addressGroup('2001:db8::7:1:2:3:4')).toBe('2001:db8:0:7::/64');
  expect(addressGroup('::1')).toBe('0:0:0:0::/64');
  expect(addressGroup('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  expect(addressGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  expect(addressGroup('')).toBe('');
});

const procLimits = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                20000                files
Max locked memory         8388608              8388608              bytes
`;

test('the open-file limit is the soft one of /proc/self/limits; the default cap is a quarter of it', () => {
  expect(openFileLimit(procLimits)).toBe(20_000);
  expect(openFileLimit(procLimits.replace('20000                20000', '1024                 4096'))).toBe(1024);
  expect(openFileLimit(procLimits.replace('20000                20000', 'unlimited            unlimited'))).toBeUndefined();
  expect(openFileLimit('')).toBeUndefined();
  expect(maxConnectionsOf(undefined, 20_000)).toBe(5_000);
  expect(maxConnectionsOf(undefined, 1_023)).toBe(255);
  expect(maxConnectionsOf(undefined, 2)).toBe(1);
  // Not readable (not Linux): a fixed default.
  expect(maxConnectionsOf(undefined, undefined)).toBe(1_000);
  // Set by the operator: as set, whatever the limit.
  expect(maxConnectionsOf(30_000, 20_000)).toBe(30_000);
});

test("Node's timeouts from the configuration, checked every second", () => {
  const config = loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '4000', HTTP_REQUEST_TIMEOUT_MS: '9000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '3000' });
  expect(httpServerOptions(config)).toEqual({ headersTimeout: 4_000, requestTimeout: 9_000, keepAliveTimeout: 3_000, connectionsCheckingInterval: 1_000 });
  expect(httpServerOptions(loadConfig({}))).toEqual({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 });
});

test('refusals are logged once when a burst starts and once, with their count, when it has been quiet for 10 s', () => {
  vi.useFakeTimers();
  const lines: { msg: string; refused?: number; reason?: string; address?: string }[] = [];
  const burst = new RefusalBurst(pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) }), { maxConnections: 10, maxPerAddress: 2 });
  burst.add('max_per_address', '192.0.2.1', 10);
  for (let i = 0; i < 999; i++) {
    vi.advanceTimersByTime(9_000);
    burst.add('max_connections', '192.0.2.2', 10);
  }
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ reason: 'max_per_address', address: '192.0.2.1' });
  vi.advanceTimersByTime(9_999);
  expect(lines).toHaveLength(1);
  vi.advanceTimersByTime(1);
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatchObject({ refused: 1_000 });
  // The next refusal starts a new burst.
  burst.add('max_connections', '192.0.2.3', 10);
  expect(lines).toHaveLength(3);
  expect(lines[2]).toMatchObject({ reason: 'max_connections', address: '192.0.2.3' });
  burst.end();
  expect(lines[3]).toMatchObject({ refused: 1 });
});

test('the connection waiting longest for its first request is the one to evict; one served is never evicted', () => {
  const waiting = new WaitingConnections<string>();
  for (const c of ['a', 'b', 'c', 'd']) waiting.add(c);
  waiting.served('a');
  expect(waiting.takeOldest()).toBe('b');
  waiting.served('c');
  expect(waiting.takeOldest()).toBe('d');
  expect(waiting.takeOldest()).toBeUndefined();
  // A connection taken out is gone: served afterwards, nothing changes.
  waiting.served('b');
  waiting.add('e');
  expect(waiting.takeOldest()).toBe('e');
});

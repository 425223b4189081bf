// The ccxt collector's watchers on a real ccxt class, offline: the exchange's watch calls are
// replaced by stand-ins, so what is tested is how a watcher re-arms, not a socket.
import * as ccxt from 'ccxt';
import type { Exchange } from 'ccxt';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, test } from 'vitest';
import { createLogger } from '../../infra/log.ts';
import markets from '../../simulator/ccxt/__fixtures__/bitget.markets.json' with { type: 'json' };
import { startCcxtCollector } from '../ccxtCollector.ts';
import { findCcxtVenue } from '../venues/registry.ts';

test('a book rejection that ccxt hands back at once, again and again, does not hold the thread: the watcher yields and backs off', async () => {
  // ccxt's Client.future keeps a future it rejected with a stored rejection (a checksum failure that
  // came while no watcher waited): every later call gets it back already rejected, until the venue's
  // next message for that book. Seen in the suite: the Bitget checksum test's worker spun at 100 %
  // for minutes. The stand-in rejects at once for 10,000 calls, then waits like a quiet venue.
  let bookCalls = 0;
  const quiet = () => sleep(20).then(() => []);
  const collector = await startCcxtCollector({
    venue: findCcxtVenue('bitget')!,
    bus: { publish: () => undefined },
    log: createLogger('silent'),
    tuning: { backoff: { baseMs: 20, maxMs: 40 } },
    markets: markets as Record<string, unknown>[],
    configure(exchange: Exchange) {
      exchange.watchTradesForSymbols = quiet as Exchange['watchTradesForSymbols'];
      exchange.watchOrderBookForSymbols = (() => {
        bookCalls += 1;
        return bookCalls <= 10_000 ? Promise.reject(new ccxt.ChecksumError('bitget ETH/USDT : orderbook data checksum validation failed')) : quiet();
      }) as unknown as Exchange['watchOrderBookForSymbols'];
    },
  });
  await collector.ready();
  await sleep(200);
  const calls = bookCalls;
  await collector.stop();
  // With backoff of at most 40 ms a call (at random, from 0), 200 ms hold tens of calls, not thousands.
  expect(calls).toBeGreaterThan(1);
  expect(calls).toBeLessThan(200);
});

// The load generator against the real collectors, over real websockets on loopback: every trade it
// counts as sent arrives once, with a venue-style id, and every book the collector keeps equals the
// generator's (no resync: sequence numbers and OKX's checksums hold at any rate).
import { afterEach, expect, test } from 'vitest';
import type { BookEvent, MarketEvent, TradeEvent } from '../../../infra/events.ts';
import { createLogger } from '../../../infra/log.ts';
import { startCollector } from '../../../ingest/collector.ts';
import type { Collector } from '../../../ingest/collectorKit.ts';
import { findNativeVenue } from '../../../ingest/venues/registry.ts';
import { LoadGenerator } from '../generator.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const markets = 4;

let running: { generator: LoadGenerator; collector: Collector }[] = [];
afterEach(async () => {
  for (const { generator, collector } of running) {
    await collector.stop();
    await generator.close();
  }
  running = [];
});

test.each(['binance', 'bybit', 'okx', 'coinbase'])('%s: every trade sent arrives once; the collector keeps the generator\'s books', async (id) => {
  const generator = await LoadGenerator.start({ venues: [id], markets, rates: { [id]: { trades: 0, books: 0 } } });
  const events: MarketEvent[] = [];
  const collector = await startCollector({
    venue: findNativeVenue(id)!,
    endpoints: generator.endpoints()[id]!,
    bus: { publish: (e) => void events.push(...e) },
    log: createLogger('silent'),
    tuning: { bookEveryMs: 100 },
  });
  running.push({ generator, collector });
  await collector.ready();
  expect(collector.markets()).toHaveLength(markets);
  // Subscribed and synced before the load starts, so every trade sent has a reader.
  await sleep(300);
  generator.setRates({ [id]: { trades: 600, books: 600 } });
  await sleep(1_500);
  generator.setRates({ [id]: { trades: 0, books: 0 } });
  await sleep(500);

  const sent = generator.sent().perVenue[id]!;
  const trades = events.filter((e): e is TradeEvent => e.type === 'trade');
  expect(sent.trades).toBeGreaterThan(600);
  expect(sent.books).toBeGreaterThan(600);
  expect(trades).toHaveLength(sent.trades);
  expect(new Set(trades.map((t) => `${t.market}/${t.tradeId}`)).size).toBe(trades.length);
  // Ids as the venue writes them: Bybit's 19 digits, the others' plain numbers.
  for (const t of trades) expect(t.tradeId).toMatch(id === 'bybit' ? /^\d{19}$/ : /^\d{9,}$/);
  const metrics = collector.metrics();
  expect({ resyncs: metrics.resyncs, unknown: metrics.unknownMessages, errors: metrics.venueErrors }).toEqual({ resyncs: 0, unknown: 0, errors: 0 });
  for (const m of generator.markets(id)) {
    const book = events.findLast((e): e is BookEvent => e.type === 'book' && e.market === m.symbol);
    expect(book?.bids).toEqual(m.bids.map(([p, q]) => [Number(p), Number(q)]));
    expect(book?.asks).toEqual(m.asks.map(([p, q]) => [Number(p), Number(q)]));
  }
});

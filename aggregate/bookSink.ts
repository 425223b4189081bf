import { commitPositionsAfter, type Bus, type Subscription } from '../infra/bus/bus.ts';
import { usdQuotes } from './currency/currencies.ts';
import type { BookEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import { marketQuality } from './marketQuality.ts';

export interface BookSinkOptions {
  bus: Bus;
  store: Store;
  log: Logger;
  /** How often the latest book of each market is measured and stored (ms). */
  everyMs: number;
  group?: string;
}

/** Only books quoted in USD or a USD stablecoin are measured, in quote units: the cost sizes take a stablecoin at par. */
const measuredQuotes = new Set<string>(usdQuotes);

/**
 * Consumes `books`, keeps the newest book of each market and, every `everyMs`, stores its quality
 * (spread, depth, cost to trade, liquidity score) in `market_quality`. The table keeps the newest
 * row per market, so only the newest book of each market matters.
 *
 * Each batch is committed as soon as it is folded into the newest books, not after the insert: the
 * collectors publish every synchronized book again every second, so books held on the bus for a
 * replay would only bring back what the next second brings anyway. Held until the insert, the
 * in-process bus carried `everyMs` of every market's books (20,000-40,000 records, 64-111 MiB by
 * its estimate, on the universe demo's 7,000 books a second) and logged the group as falling behind
 * every minute. What a crash costs is the newest books not yet stored: each market's row is late by
 * its next book.
 */
export async function startBookSink(options: BookSinkOptions): Promise<{ stop(): Promise<void> }> {
  const { bus, store, log } = options;
  let latest = new Map<string, BookEvent>();
  let queue: Promise<void> = Promise.resolve();
  let subscription: Subscription | undefined;
  /** The last insert failed: the store is down or hung, and a stop does not wait on it again. */
  let lastInsertFailed = false;

  const flush = (): Promise<void> => {
    queue = queue.then(async () => {
      if (latest.size === 0) return;
      const books = [...latest.values()];
      latest = new Map();
      const rows = [];
      for (const b of books) {
        if (!measuredQuotes.has(b.quote)) continue;
        const q = marketQuality(b, 1);
        if (!q) continue;
        rows.push({
          asset: b.asset, venue: b.venue, market: b.market, quote: b.quote, ts: b.ts,
          spread_bps: q.spreadBps, depth_bid_2: q.depthBid, depth_ask_2: q.depthAsk, depth_bid_1: q.depthBid1, depth_ask_1: q.depthAsk1,
          cost_buy: q.costBuy, cost_sell: q.costSell, liquidity_score: q.liquidityScore,
        });
      }
      try {
        await store.insert('market_quality', rows);
        lastInsertFailed = false;
      } catch (err) {
        // Newer books will come within a second: these are skipped, not retried.
        lastInsertFailed = true;
        log.error({ err, markets: rows.length }, 'market quality insert failed; these books are skipped');
      }
    });
    return queue;
  };

  subscription = await bus.subscribe({
    group: options.group ?? 'aggregate-books',
    topics: ['books'],
    // No reset at a new assignment: what was received is committed, so no member gets it again and
    // it is stored at the next flush (the table keeps the newest `ts` whoever stores it).
    onBatch: async (records) => {
      for (const r of records) {
        const key = `${r.event.venue}\u0000${r.event.market}`;
        if ((latest.get(key)?.ts ?? -1) <= r.event.ts) latest.set(key, r.event);
      }
      // The first batch can come before `subscribe` returns: its records are committed with the next one.
      await subscription?.commit(commitPositionsAfter(records)).catch((err: unknown) => log.warn({ err }, 'book commit failed'));
    },
  });
  const timer = setInterval(() => void flush(), options.everyMs);

  return {
    /** Stores the newest books, unless the store has failed: then they are not measured, and logged. */
    async stop() {
      clearInterval(timer);
      await subscription?.stop();
      await queue;
      if (!lastInsertFailed) return flush();
      if (latest.size > 0) log.error({ markets: latest.size }, 'stopped with the store failing: the newest books of these markets were not measured');
    },
  };
}

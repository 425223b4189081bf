// Re-listing: a collector asks the venue for its markets again every `everyMs`, to follow new
// listings and drop delisted ones. This part owns the timer and the listing; the market set says
// what changed, and the collector's `onChange` does what a change means for it (books, sockets).
import type { Logger } from '../infra/log.ts';
import type { MarketChange, MarketSet } from './marketSet.ts';
import type { MarketListing } from './venue.ts';

export interface MarketsRefreshOptions {
  everyMs: number;
  /** The collector's first listing: no refresh starts before it is done. */
  started: Promise<void>;
  list(): Promise<MarketListing[]>;
  markets: MarketSet;
  /** Runs after the market set took a change, before the change is logged. */
  onChange(change: MarketChange): Promise<void>;
  stopped(): boolean;
  log: Logger;
}

export class MarketsRefresh {
  readonly #options: MarketsRefreshOptions;
  readonly #timer: NodeJS.Timeout;
  /** The refresh under way: one at a time, however slow the venue answers. */
  #running: Promise<void> | undefined;

  constructor(options: MarketsRefreshOptions) {
    this.#options = options;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = options.started.then(() => this.refresh()).finally(() => (this.#running = undefined));
    }, options.everyMs);
  }

  /** Lists the markets once and applies what changed; a failed listing keeps the current markets. */
  async refresh(): Promise<void> {
    const { log, markets } = this.#options;
    let listings: MarketListing[];
    try {
      listings = await this.#options.list();
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'market refresh failed: keeping the current markets');
      return;
    }
    if (this.#options.stopped()) return;
    const change = markets.apply(listings);
    if (change.added.length === 0 && change.removed.length === 0) {
      log.debug({ markets: markets.markets.length }, 'markets unchanged');
      return;
    }
    await this.#options.onChange(change);
    log.info({ added: change.added.map((m) => m.symbol), removed: change.removed.map((m) => m.symbol), markets: markets.markets.length }, 'markets changed');
  }

  /** No refresh starts any more; resolves once the one under way, if any, is done. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}

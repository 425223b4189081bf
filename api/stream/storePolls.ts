import type { Logger } from '../../infra/log.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { measuredRule, type MeasuredConfig } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { loadPrices } from '../read/prices.ts';
import { loadCurrentCandles } from './currentCandles.ts';
import type { StreamHub } from './hub.ts';
import { candleIntervals } from './protocol.ts';

/** The index runner writes one row per asset and second: polling each second sees every change. */
const pollEveryMs = 1_000;
const failureLogEveryMs = 60_000;

/**
 * Once a second, the prices and current candles of the assets this replica's connections
 * subscribed to, read from the store with the same reads as /v1/prices and /v1/coins/{id}/ohlc
 * (one query for all prices, one per candle interval in use, shared by every connection), handed
 * to the hub, which sends each connection what changed. Every replica polls on its own: nothing
 * to coordinate, and the store is the one truth all of them read.
 */
export function startPolls(deps: { store: StoreCalls; hub: StreamHub; config: MeasuredConfig; log: Logger }): { stop(): Promise<void> } {
  const { store, hub, config, log } = deps;
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let lastFailureLogged = 0;

  async function poll(): Promise<void> {
    const now = Date.now();
    const prices = hub.subscribedAssets('prices');
    if (prices.length > 0) hub.publishPrices((await loadPrices(store, prices, now, measuredRule(config))).prices);
    for (const interval of candleIntervals) {
      const assets = hub.subscribedAssets('candles', interval);
      if (assets.length > 0) hub.publishCandles(interval, await loadCurrentCandles(store, interval, assets, now));
    }
  }

  let polling: Promise<void> = Promise.resolve();
  const tick = () => {
    const startedAt = Date.now();
    polling = poll()
      .catch((err: unknown) => {
        // The store is failing: subscribers get nothing new until it answers again.
        if (Date.now() - lastFailureLogged < failureLogEveryMs) return;
        lastFailureLogged = Date.now();
        log.warn({ err }, 'stream: cannot read prices or candles; retrying every second');
      })
      .finally(() => {
        // Never two polls at once: a slow store stretches the interval instead.
        if (running) timer = setTimeout(tick, Math.max(0, pollEveryMs - (Date.now() - startedAt)));
      });
  };
  tick();

  return {
    async stop() {
      running = false;
      clearTimeout(timer);
      await polling;
    },
  };
}

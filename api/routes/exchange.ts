import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { findVenue } from '../../infra/catalog/catalog.ts';
import { describeAsset } from '../../infra/catalog/discovered.ts';
import { usdQuotes } from '../../aggregate/currency/currencies.ts';
import { loadUsdQuoteRates } from '../../aggregate/currency/usdRates.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { ApiError } from '../errors.ts';
import { dayMs, exchangeRow, loadExchangeRow, loadVenueMarkets } from '../read/exchangeRows.ts';
import type { CachedRoute } from '../responseCache.ts';

const historySql = readFileSync(new URL('./exchangeVolumeHistory.sql', import.meta.url), 'utf8');
const historyDays = 30;

const exchangeMarket = z.object({
  pair: z.string().describe('BASE/QUOTE'),
  market: z.string().describe("the venue's symbol"),
  assetId: z.string(),
  quote: z.string(),
  price: z.number().describe('last trade price, in the quote currency'),
  trades24h: z.number().int(),
  volume24h: z.number().describe('USD volume of the last 24 h (a USD stablecoin quote at its measured rate, as the index)'),
});

const exchangeResponse = z.object({
  exchange: exchangeRow.extend({
    markets: z.array(exchangeMarket).describe('markets that traded in the last 24 h, largest volume first'),
    volumeHistory: z
      .array(z.object({ date: z.string().describe('UTC day, YYYY-MM-DD'), volume: z.number().describe('USD, USD stablecoin quotes at par (the rate of a past day is not kept)') }))
      .describe(`daily USD volume over the last ${historyDays} days we measured, oldest first, the current UTC day (so far) last`),
  }),
  at: z.number().int().describe('unix ms at which the response was built'),
});

const exchangePath = z.object({ id: z.string().describe('exchange id, e.g. binance') });

/** GET /v1/exchanges/{id} (spec 4.8): the list row (with its score breakdown) plus its markets and daily volume. */
export function exchangeRoute(deps: { store: StoreCalls }): CachedRoute {
  return {
    path: '/v1/exchanges/:id',
    refreshSeconds: 60,
    doc: {
      operationId: 'exchange',
      tag: 'Market',
      summary: 'One exchange: its score breakdown, markets and daily volume',
      path: exchangePath,
      query: z.object({}),
      response: exchangeResponse,
      errors: [404],
    },
    resolve(req) {
      const id = String(req.params.id);
      const venue = findVenue(id);
      if (!venue) throw new ApiError(404, 'not_found', `no exchange with id ${JSON.stringify(id)}`);
      return {
        key: id,
        build: async () => {
          const at = Date.now();
          const todayS = Math.floor(at / dayMs) * (dayMs / 1000);
          const rates = await loadUsdQuoteRates(deps.store, at);
          const [markets, pastDays] = await Promise.all([
            loadVenueMarkets(deps.store, at, rates, id),
            deps.store.rows<{ date: string; volume: number }>(historySql, {
              venue: id,
              from_s: Math.floor((at - historyDays * dayMs) / 1000),
              to_s: todayS,
              usd_quotes: usdQuotes,
            }),
          ]);
          // The row's totals, its score and the current day of its history are summed from the
          // markets served beside them: one read, numbers that agree.
          const row = await loadExchangeRow(deps.store, at, venue, markets);
          const today = markets.reduce((sum, m) => sum + m.volumeToday, 0);
          const history = today > 0 ? [...pastDays, { date: new Date(todayS * 1000).toISOString().slice(0, 10), volume: today }] : pastDays;
          return {
            exchange: {
              ...row,
              markets: markets.map((m) => ({
                pair: `${(describeAsset(m.asset)?.symbol ?? m.asset).toUpperCase()}/${m.quote}`,
                market: m.market,
                assetId: m.asset,
                quote: m.quote,
                price: m.price,
                trades24h: m.trades24h,
                volume24h: m.volume24h,
              })),
              volumeHistory: history,
            },
            at,
          };
        },
      };
    },
  };
}

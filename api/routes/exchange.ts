import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { findAsset, findVenue } from '../../infra/catalog/catalog.ts';
import { usdQuotes } from '../../aggregate/currency/currencies.ts';
import { loadUsdQuoteRates, usdQuoteParams } from '../../aggregate/currency/usdRates.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { ApiError } from '../errors.ts';
import { dayMs, exchangeRow, loadExchangeRow } from '../read/exchangeRows.ts';
import type { CachedRoute } from '../responseCache.ts';

const marketsSql = readFileSync(new URL('./exchangeMarkets.sql', import.meta.url), 'utf8');
const historySql = readFileSync(new URL('./exchangeVolumeHistory.sql', import.meta.url), 'utf8');
const historyDays = 30;

const sumOf = <T>(rows: readonly T[], value: (row: T) => number) => rows.reduce((sum, row) => sum + value(row), 0);

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
      .describe(`daily USD volume over the last ${historyDays} days we measured, oldest first`),
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
          const rates = await loadUsdQuoteRates(deps.store, at);
          const [markets, history] = await Promise.all([
            deps.store.rows<{ market: string; asset: string; quote: string; price: number; trades24h: number; volume24h: number }>(marketsSql, {
              venue: id,
              from_s: Math.floor((at - dayMs) / 1000),
              ...usdQuoteParams(rates),
            }),
            deps.store.rows<{ date: string; volume: number }>(historySql, {
              venue: id,
              from_s: Math.floor((at - historyDays * dayMs) / 1000),
              usd_quotes: usdQuotes,
            }),
          ]);
          // The row's totals are the sums of the markets served beside them: one read, numbers that agree.
          const day = { markets: markets.length, trades24h: sumOf(markets, (m) => m.trades24h), volume24h: sumOf(markets, (m) => m.volume24h) };
          const row = await loadExchangeRow(deps.store, at, venue, day, rates);
          return {
            exchange: {
              ...row,
              markets: markets.map((m) => ({
                pair: `${(findAsset(m.asset)?.symbol ?? m.asset).toUpperCase()}/${m.quote}`,
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

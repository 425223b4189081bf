// Bybit's public trade archive, public.bybit.com (an HTML listing, daily .csv.gz, no checksums;
// "You can download archived historical trades from the website": docs/v5/market/recent-trade).
// Linear (`/trading/BTCUSDT/BTCUSDT2025-01-01.csv.gz`): timestamp (epoch seconds with a fraction),
// symbol, side (Buy/Sell, the taker's), size (base units), price, tickDirection, trdMatchID,
// grossValue, homeNotional, foreignNotional[, RPI]. Its trdMatchID is a UUID of the same form as the
// websocket's trade id `i`, which the collector stores: taken as the same id (unverified, see
// ../../README.md). Spot (`/spot/BTCUSDT/BTCUSDT_2025-05-17.csv.gz`): id, timestamp (ms), price,
// volume, side (buy/sell)[, rpi], where `id` numbers the rows of the file: no venue id at all.
import { epochSeconds, positive, sideText, headerStartingWithLetter, tradeOf, type ArchiveFormat, type ParsedRow } from './format.ts';
import { concatenatedQuotes, periodOf, splitBySuffix, type ArchiveSource } from './source.ts';

const gz = (path: string) => `${path}.csv.gz`;

/** Linear rows: the RPI column, added in 2025, is the last, so the others keep their places. */
function parseLinear(line: string, market: string): ParsedRow {
  const [timestamp, symbol, side, size, price, , trdMatchID] = line.split(',');
  return tradeOf({ market: symbol || market, tradeId: trdMatchID, ts: epochSeconds(timestamp ?? ''), price: positive(price), quantity: positive(size), side: sideText(side) });
}

/** Spot rows get the id `<day>#<row id>`: unique in the market, and never equal to a venue id (digits only). */
function parseSpot(line: string, market: string, period: string): ParsedRow {
  const [id, timestamp, price, volume, side] = line.split(',');
  const ts = /^\d{13}$/.test(timestamp ?? '') ? Number(timestamp) : undefined;
  return tradeOf({ market, tradeId: /^\d+$/.test(id ?? '') ? `${period}#${id}` : undefined, ts, price: positive(price), quantity: positive(volume), side: sideText(side) });
}

const linear: ArchiveFormat = { venue: 'bybit-linear', kind: 'trading', identity: 'live', header: headerStartingWithLetter, parse: (line, { market }) => parseLinear(line, market) };
const spot: ArchiveFormat = { venue: 'bybit', kind: 'spot', identity: 'uncovered', header: headerStartingWithLetter, parse: (line, { market, period }) => parseSpot(line, market, period) };

const shared = {
  docs: 'https://public.bybit.com',
  baseUrl: 'https://public.bybit.com',
  periods: { daily: true, monthly: false },
  checksums: false,
  dayOffsetHours: 0,
  splitSymbol: (symbol: string) => splitBySuffix(symbol, concatenatedQuotes),
} as const;

export const bybitLinearArchive: ArchiveSource = {
  ...shared,
  venue: 'bybit-linear',
  kinds: { trading: linear },
  path: (market, _kind, period) => gz(`/trading/${market}/${market}${'daily' in period ? period.daily : period.monthly}`),
  parseName(fileName) {
    const m = /^([A-Z0-9]+?)(\d{4}-\d{2}-\d{2})(?:\.|$)/.exec(fileName);
    const period = m && periodOf(m[2]!);
    return m && period ? { market: m[1]!, kind: 'trading', period } : undefined;
  },
};

export const bybitSpotArchive: ArchiveSource = {
  ...shared,
  venue: 'bybit',
  kinds: { spot },
  path: (market, _kind, period) => gz(`/spot/${market}/${market}_${'daily' in period ? period.daily : period.monthly}`),
  parseName(fileName) {
    const m = /^([A-Z0-9]+)_(\d{4}-\d{2}-\d{2})(?:\.|$)/.exec(fileName);
    const period = m && periodOf(m[2]!);
    return m && period ? { market: m[1]!, kind: 'spot', period } : undefined;
  },
};

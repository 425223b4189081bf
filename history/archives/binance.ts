// Binance's public bulk archive, data.binance.vision: https://github.com/binance/binance-public-data
// (README: columns, CHECKSUM files, "new daily data becoming available the next day").
// Spot: `trades` (id,price,qty,quoteQty,time,isBuyerMaker,isBestMatch; no header; time in µs from
// 2025-01-01, ms before) and `aggTrades` (aggId,price,qty,firstId,lastId,time,isBuyerMaker,isBestMatch).
// USD-M (`futures/um`): `trades` (id,price,qty,quote_qty,time,is_buyer_maker) and `aggTrades`
// (agg_trade_id,price,quantity,first_trade_id,last_trade_id,transact_time,is_buyer_maker), with a
// header only after 2022-08 (binance-public-data#278), times in ms, booleans lower-case.
// isBuyerMaker = true: the buyer was the maker, so the taker sold.
import { allDigits, booleanText, epochMsOrUs, malformed, positive, headerStartingWithLetter, tradeOf, type ArchiveFormat, type ParsedRow } from './format.ts';
import { concatenatedQuotes, periodOf, splitBySuffix, type ArchiveName, type ArchiveSource, type Period } from './source.ts';

const takerSide = (isBuyerMaker: string | undefined) => {
  const maker = booleanText(isBuyerMaker);
  return maker === undefined ? undefined : maker ? 'sell' : 'buy';
};

/** The first `count` comma-separated cells of a line (the hot path: a day has millions of rows; no array of every cell). */
function cells(line: string, count: number): string[] {
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < count; i++) {
    const end = line.indexOf(',', from);
    out.push(end < 0 ? line.slice(from) : line.slice(from, end));
    if (end < 0) break;
    from = end + 1;
  }
  return out;
}

/** `trades`: one row per trade, its id the one `<symbol>@trade` streams (spot). */
function parseTrade(line: string, market: string): ParsedRow {
  const [id, price, qty, , time, isBuyerMaker] = cells(line, 6);
  return tradeOf({ market, tradeId: allDigits(id ?? '') ? id : undefined, ts: epochMsOrUs(time ?? ''), price: positive(price), quantity: positive(qty), side: takerSide(isBuyerMaker) });
}

/**
 * Spot `aggTrades`: the fills of one taker order at one price, ids first..last. The collector stores
 * each fill under its own id (`@trade`), so only an aggTrade of one fill is that trade; one of several
 * fills cannot be split into them (their quantities are not in the file).
 */
function parseSpotAggTrade(line: string, market: string): ParsedRow {
  const [, price, qty, firstId, lastId, time, isBuyerMaker] = cells(line, 7);
  if (!/^\d+$/.test(firstId ?? '') || !/^\d+$/.test(lastId ?? '')) return malformed;
  if (firstId !== lastId) return { refused: 'aggTrade of several fills (binance stores each fill: import `trades` for them)' };
  return tradeOf({ market, tradeId: firstId, ts: epochMsOrUs(time ?? ''), price: positive(price), quantity: positive(qty), side: takerSide(isBuyerMaker) });
}

/** USD-M `aggTrades`: the collector of binance-futures stores `@aggTrade` rows by their id `a`: the same rows. */
function parseFuturesAggTrade(line: string, market: string): ParsedRow {
  const [aggId, price, qty, , , time, isBuyerMaker] = cells(line, 7);
  return tradeOf({ market, tradeId: allDigits(aggId ?? '') ? aggId : undefined, ts: epochMsOrUs(time ?? ''), price: positive(price), quantity: positive(qty), side: takerSide(isBuyerMaker) });
}

const format = (venue: string, kind: string, parse: (line: string, market: string) => ParsedRow): ArchiveFormat => ({
  venue,
  kind,
  identity: 'live',
  header: headerStartingWithLetter,
  parse: (line, { market }) => parse(line, market),
});

/** `BTCUSDT-trades-2024-01-01.zip`, `BTCUSDT-aggTrades-2024-01.csv`; anything between the period and the extension is allowed (`.first210`). */
function parseName(fileName: string): ArchiveName | undefined {
  const m = /^([A-Z0-9]+)-(trades|aggTrades)-(\d{4}-\d{2}(?:-\d{2})?)(?:\.|$)/.exec(fileName);
  const period = m && periodOf(m[3]!);
  return m && period ? { market: m[1]!, kind: m[2]!, period } : undefined;
}

const pathOf = (root: string) => (market: string, kind: string, period: Period) => {
  const [every, text] = 'daily' in period ? ['daily', period.daily] : ['monthly', period.monthly];
  return `${root}/${every}/${kind}/${market}/${market}-${kind}-${text}.zip`;
};

const shared = {
  docs: 'https://github.com/binance/binance-public-data',
  baseUrl: 'https://data.binance.vision',
  periods: { daily: true, monthly: true },
  checksums: true,
  dayOffsetHours: 0,
  parseName,
  splitSymbol: (symbol: string) => splitBySuffix(symbol, concatenatedQuotes),
} as const;

export const binanceArchive: ArchiveSource = {
  ...shared,
  venue: 'binance',
  kinds: { trades: format('binance', 'trades', parseTrade), aggTrades: format('binance', 'aggTrades', parseSpotAggTrade) },
  path: pathOf('/data/spot'),
};

export const binanceFuturesArchive: ArchiveSource = {
  ...shared,
  venue: 'binance-futures',
  kinds: {
    aggTrades: format('binance-futures', 'aggTrades', parseFuturesAggTrade),
    // Trade ids are not aggTrade ids, and an aggTrade's fills are not in it: no row maps to a stored one.
    trades: { refused: 'binance-futures stores aggregate trades by their aggTrade id (the collector reads `@aggTrade`): import `aggTrades`' },
  },
  path: pathOf('/data/futures/um'),
};

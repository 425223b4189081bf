// KuCoin's trade archive, historical-data.kucoin.com (observed from 2024-04-18; third-party notes,
// research/trade-history.md §2.11): `/data/spot/daily/trades/BTC-USDT/BTC-USDT-trades-2024-05-13.zip`
// with a `.CHECKSUM` beside it. Header `trade_id,trade_time,price,size,side` (ms, BUY/SELL). Whether
// its trade_id is the websocket's tradeId, which the collector stores, is unverified: rows import
// only outside the span the store holds of the market.
import { headerStartingWithLetter, positive, sideText, tradeOf, type ArchiveFormat, type ParsedRow } from './format.ts';
import { periodOf, type ArchiveSource } from './source.ts';

function parseRow(line: string, market: string): ParsedRow {
  const [tradeId, time, price, size, side] = line.split(',');
  return tradeOf({ market, tradeId: /^\d+$/.test(tradeId ?? '') ? tradeId : undefined, ts: /^\d{13}$/.test(time ?? '') ? Number(time) : undefined, price: positive(price), quantity: positive(size), side: sideText(side) });
}

const trades: ArchiveFormat = { venue: 'kucoin', kind: 'trades', identity: 'uncovered', header: headerStartingWithLetter, parse: (line, { market }) => parseRow(line, market) };

export const kucoinArchive: ArchiveSource = {
  venue: 'kucoin',
  docs: 'https://historical-data.kucoin.com',
  baseUrl: 'https://historical-data.kucoin.com',
  kinds: { trades },
  periods: { daily: true, monthly: false },
  checksums: true,
  dayOffsetHours: 0,
  path: (market, kind, period) => `/data/spot/daily/${kind}/${market}/${market}-${kind}-${'daily' in period ? period.daily : period.monthly}.zip`,
  parseName(fileName) {
    const m = /^([A-Z0-9]+-[A-Z0-9]+)-trades-(\d{4}-\d{2}-\d{2})(?:\.|$)/.exec(fileName);
    const period = m && periodOf(m[2]!);
    return m && period ? { market: m[1]!, kind: 'trades', period } : undefined;
  },
  splitSymbol(symbol) {
    const [base, quote] = symbol.split('-');
    return base && quote ? { base, quote } : undefined;
  },
};

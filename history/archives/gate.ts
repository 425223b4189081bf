// Gate's trade archive, download.gatedata.org: monthly files published after the month closes,
// `/spot/deals/202601/BTC_USDT-202601.csv.gz`, no header, no checksums (third-party notes,
// research/trade-history.md §2.9). Columns: time (epoch seconds with µs), id, price, amount, side
// (1 = sell, 2 = buy). Whether the id is the websocket's (which the collector stores) or the REST
// sequence_id is unverified: rows import only outside the span the store holds of the market.
import { epochSeconds, headerStartingWithLetter, positive, tradeOf, type ArchiveFormat, type ParsedRow } from './format.ts';
import { type ArchiveSource } from './source.ts';

const sides: Record<string, 'buy' | 'sell'> = { '1': 'sell', '2': 'buy' };

function parseRow(line: string, market: string): ParsedRow {
  const [time, id, price, amount, side] = line.split(',');
  return tradeOf({ market, tradeId: /^\d+$/.test(id ?? '') ? id : undefined, ts: epochSeconds(time ?? ''), price: positive(price), quantity: positive(amount), side: sides[side ?? ''] });
}

const deals: ArchiveFormat = { venue: 'gate', kind: 'deals', identity: 'uncovered', header: headerStartingWithLetter, parse: (line, { market }) => parseRow(line, market) };

export const gateArchive: ArchiveSource = {
  venue: 'gate',
  docs: 'https://www.gate.com/developer/historical_quotes',
  baseUrl: 'https://download.gatedata.org',
  kinds: { deals },
  periods: { daily: false, monthly: true },
  checksums: false,
  dayOffsetHours: 0,
  path: (market, _kind, period) => {
    const month = ('daily' in period ? period.daily.slice(0, 7) : period.monthly).replace('-', '');
    return `/spot/deals/${month}/${market}-${month}.csv.gz`;
  },
  parseName(fileName) {
    const m = /^([A-Z0-9]+_[A-Z0-9]+)-(\d{4})(\d{2})(?:\.|$)/.exec(fileName);
    return m ? { market: m[1]!, kind: 'deals', period: { monthly: `${m[2]}-${m[3]}` } } : undefined;
  },
  splitSymbol(symbol) {
    const [base, quote] = symbol.split('_');
    return base && quote ? { base, quote } : undefined;
  },
};

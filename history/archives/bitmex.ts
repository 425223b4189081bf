// BitMEX's public trade archive: one daily file of every symbol,
// https://s3-eu-west-1.amazonaws.com/public.bitmex.com/data/trade/20181205.csv.gz (since
// 2014-11-22, no checksums). Header `timestamp,symbol,side,size,price,tickDirection,trdMatchID,
// grossValue,homeNotional,foreignNotional`, later with `trdType,pool` added at the end; timestamps
// in kdb+ form, `2018-12-05D00:00:25.948313000`. trdMatchID is the id the collector stores (the
// websocket's trade rows carry the same fields). size counts contracts; homeNotional is the same
// trade in the underlying (XBT for the inverse XBTUSD: size / price), the base units we store.
import { kdbTimestamp, positive, headerStartingWithLetter, sideText, tradeOf, type ArchiveFormat, type ParsedRow } from './format.ts';
import { periodOf, splitBySuffix, type ArchiveSource } from './source.ts';

function parseRow(line: string): ParsedRow {
  const [timestamp, symbol, side, size, price, , trdMatchID, , homeNotional] = line.split(',');
  return tradeOf({ market: symbol ?? '', tradeId: trdMatchID, ts: kdbTimestamp(timestamp ?? ''), price: positive(price), quantity: positive(size), side: sideText(side), baseQuantity: positive(homeNotional) ?? '' });
}

const trade: ArchiveFormat = { venue: 'bitmex', kind: 'trade', identity: 'live', header: headerStartingWithLetter, parse: parseRow };

export const bitmexArchive: ArchiveSource = {
  venue: 'bitmex',
  docs: 'https://public.bitmex.com/?prefix=data/trade/',
  baseUrl: 'https://s3-eu-west-1.amazonaws.com',
  kinds: { trade },
  periods: { daily: true, monthly: false },
  checksums: false,
  dayOffsetHours: 0,
  path: (_market, _kind, period) => `/public.bitmex.com/data/trade/${('daily' in period ? period.daily : period.monthly).replaceAll('-', '')}.csv.gz`,
  parseName(fileName) {
    const m = /^(\d{4})(\d{2})(\d{2})(?:\.|$)/.exec(fileName);
    const period = m && periodOf(`${m[1]}-${m[2]}-${m[3]}`);
    return period ? { kind: 'trade', period } : undefined;
  },
  // XBTUSD, ETHUSD: the quote is the suffix; dated futures (XBTZ18) have none and are not collected.
  splitSymbol: (symbol) => splitBySuffix(symbol, ['USDT', 'USD']),
};

// OKX's trade archive on its CDN, static.okx.com/cdn/okex/traderecords (the data-download page;
// no checksums seen): daily `trades/daily/20260701/BTC-USDT-SWAP-trades-2026-07-01.zip` and monthly
// `trades/monthly/202607/…-2026-07.zip`, the same for `aggtrades`. A file's day is the day at UTC+8:
// the file dated 2023-11-18 starts at 2023-11-17 16:00 UTC. Header `instrument_name,trade_id,side,
// price,size,created_time` (ms); older files lack instrument_name and order `trade_id,side,size,
// price,created_time`, their names followed by a Chinese gloss (`trade_id/…`): columns are read by name.
// Swap sizes are contracts. The collector stores the `trades` channel, one row per taker order
// whose tradeId is the last of its `count` fills (OKX v5 docs, trades channel): archive rows are
// single fills (`trades`) or orders whose id convention is not documented (`aggtrades`), so both
// import only outside the span the store holds of the market.
import { positive, sideText, tradeOf, type ArchiveFormat, type LineContext, type ParsedRow } from './format.ts';
import { periodOf, type ArchiveName, type ArchiveSource, type Period } from './source.ts';

const newLayout = ['instrument_name', 'trade_id', 'side', 'price', 'size', 'created_time'];

/** The header's names without their gloss: `trade_id/成交id` -> `trade_id`. */
export const okxColumns = (header: string) => header.split(',').map((name) => name.split('/')[0]!.trim());

function parseRow(line: string, { market, columns = newLayout }: LineContext): ParsedRow {
  const cells = line.split(',');
  const cell = (name: string) => {
    const at = columns.indexOf(name);
    return at < 0 ? undefined : cells[at];
  };
  const time = cell('created_time') ?? '';
  return tradeOf({
    market: cell('instrument_name') || market,
    tradeId: /^\d+$/.test(cell('trade_id') ?? '') ? cell('trade_id') : undefined,
    ts: /^\d{13}$/.test(time) ? Number(time) : undefined,
    price: positive(cell('price')),
    quantity: positive(cell('size')),
    side: sideText(cell('side')),
  });
}

const format = (venue: string, kind: string): ArchiveFormat => ({
  venue,
  kind,
  identity: 'uncovered',
  header: (line) => (/^(instrument_name|trade_id)\b/.test(line) ? okxColumns(line) : undefined),
  parse: parseRow,
});

/** `BTC-USDT-trades-2023-11-18.zip`, `BTC-USDT-SWAP-aggtrades-2026-07.zip`. */
function parseName(fileName: string): ArchiveName | undefined {
  const m = /^([A-Z0-9]+(?:-[A-Z0-9]+)+?)-(trades|aggtrades)-(\d{4}-\d{2}(?:-\d{2})?)(?:\.|$)/.exec(fileName);
  const period = m && periodOf(m[3]!);
  return m && period ? { market: m[1]!, kind: m[2]!, period } : undefined;
}

function path(market: string, kind: string, period: Period): string {
  if ('daily' in period) return `/cdn/okex/traderecords/${kind}/daily/${period.daily.replaceAll('-', '')}/${market}-${kind}-${period.daily}.zip`;
  return `/cdn/okex/traderecords/${kind}/monthly/${period.monthly.replace('-', '')}/${market}-${kind}-${period.monthly}.zip`;
}

const shared = {
  docs: 'https://www.okx.com/data-download',
  baseUrl: 'https://static.okx.com',
  periods: { daily: true, monthly: true },
  checksums: false,
  dayOffsetHours: 8,
  path,
  parseName,
  splitSymbol(symbol: string) {
    const [base, quote] = symbol.split('-');
    return base && quote ? { base, quote } : undefined;
  },
} as const;

export const okxArchive: ArchiveSource = { ...shared, venue: 'okx', kinds: { trades: format('okx', 'trades'), aggtrades: format('okx', 'aggtrades') } };
export const okxSwapArchive: ArchiveSource = { ...shared, venue: 'okx-swap', kinds: { trades: format('okx-swap', 'trades'), aggtrades: format('okx-swap', 'aggtrades') }, contracts: true };

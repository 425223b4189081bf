// What every archive source (one file per venue beside this one) declares, and the pure helpers
// they share: times in the venues' several notations, sides, numbers. No I/O here.

/** A trade as an archive row states it, before the market's units are applied. */
export interface ArchiveTrade {
  /** The venue's market symbol: the file's, or the row's where one file holds many markets (BitMEX). */
  market: string;
  tradeId: string;
  /** Unix ms (the trades table keeps ms; finer digits are cut, never rounded up into the next ms). */
  ts: number;
  /** Decimal text as the file writes it. */
  price: string;
  /** Decimal text in the file's unit: base units, or contracts where the market has a contract size. */
  quantity: string;
  /** Set where the file states the quantity in base units itself (BitMEX homeNotional). */
  baseQuantity?: string;
  /** The taker's side. */
  side: 'buy' | 'sell';
}

/** A row the format refuses, with the reason counted in the summary. */
export interface RowRefusal {
  refused: string;
}

/** One line's meaning: a trade, a refusal, or nothing (a header or a blank line). */
export type ParsedRow = ArchiveTrade | RowRefusal | undefined;

export const isRefusal = (row: ParsedRow): row is RowRefusal => row !== undefined && 'refused' in row;

/**
 * How the rows of an archive kind relate to the trades the live collector stores (the trade_id
 * of a stored trade is what the collector stores for that venue):
 * - `live`: the archive's ids are the live ids: a row is new unless the store holds its id.
 * - `uncovered`: the ids are of another kind (single fills where the collector stores orders, row
 *   numbers, or ids whose equality with the live ones is unverified): rows are imported only
 *   outside the span of the market's trades that the store held when the file was first read, so
 *   no fill is stored under two identities.
 */
export type IdentityRule = 'live' | 'uncovered';

/** What the line parser knows of its file besides the line. */
export interface LineContext {
  /** The market of the file (from its name); multi-market files give each row's own. */
  market: string;
  /** 1 for the file's first line. */
  lineNumber: number;
  /** The day or month the file is named for, `YYYY-MM-DD` or `YYYY-MM` (for ids made of it). */
  period: string;
  /** The names of the file's header line, where it has one (formats whose columns moved over the years read by name). */
  columns?: readonly string[];
}

/** One archive kind of one venue: its rows, its identity rule, and where the venue publishes it. */
export interface ArchiveFormat {
  venue: string;
  /** The venue's own name of the kind, as in its file names: `trades`, `aggTrades`. */
  kind: string;
  identity: IdentityRule;
  /** The column names when the line is a header, else undefined (sniffed: the same kind has files with and without one). */
  header(line: string): readonly string[] | undefined;
  /** Pure: one line of the file (without its line break) to its meaning. Never throws. */
  parse(line: string, context: LineContext): ParsedRow;
}

/** Why an archive kind cannot be imported at all for a venue: the error names the kind to use. */
export class RefusedKindError extends Error {
  override name = 'RefusedKindError';
}

export const malformed: RowRefusal = { refused: 'malformed row' };

const positiveDecimal = /^(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Digits with at most one point: what nearly every row holds, checked without a regex (millions of rows a day). */
function plainDecimal(text: string): boolean {
  let point = false;
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) digits += 1;
    else if (c === 46 && !point) point = true;
    else return false;
  }
  return digits > 0;
}

/** A price or quantity as the file writes it, when it is a positive finite number. */
export function positive(text: string | undefined): string | undefined {
  if (text === undefined || !(plainDecimal(text) || positiveDecimal.test(text))) return undefined;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? text : undefined;
}

/** Whether every character is a digit (and there is one). */
export function allDigits(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * Epoch milliseconds or microseconds by their number of digits: Binance spot files write µs from
 * 2025-01-01 and ms before (binance-public-data README). 16 digits is µs from 2001-09-09 to 2286.
 */
export function epochMsOrUs(text: string): number | undefined {
  if ((text.length !== 13 && text.length !== 16) || !allDigits(text)) return undefined;
  return text.length === 13 ? Number(text) : Number(text.slice(0, -3));
}

/** Epoch seconds with an optional fraction (`1696982287.4922`, Bybit; `1767225600.277618`, Gate), exact to the ms. */
export function epochSeconds(text: string): number | undefined {
  const m = /^(\d{9,11})(?:\.(\d+))?$/.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0').slice(0, 3));
}

/** kdb+'s timestamp, `2018-12-05D00:00:25.948313000` (BitMEX), to the ms. */
export function kdbTimestamp(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})D(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = Number((frac ?? '').padEnd(3, '0').slice(0, 3));
  const at = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  return Number.isNaN(at) ? undefined : at;
}

/** Ids travel as tab-separated text: letters, digits and a few marks only (every venue's ids fit). */
const plainId = /^[\w#:.-]{1,100}$/;
const validId = (id: string) => (id.length <= 20 && allDigits(id)) || plainId.test(id);

/** A trade from checked fields, or the malformed refusal when one of them did not parse. */
export function tradeOf(fields: { market: string; tradeId: string | undefined; ts: number | undefined; price: string | undefined; quantity: string | undefined; side: 'buy' | 'sell' | undefined; baseQuantity?: string }): ArchiveTrade | RowRefusal {
  const { market, tradeId, ts, price, quantity, side, baseQuantity } = fields;
  if (!tradeId || !validId(tradeId) || ts === undefined || !Number.isSafeInteger(ts) || !price || !quantity || !side || baseQuantity === '') return malformed;
  return baseQuantity === undefined ? { market, tradeId, ts, price, quantity, side } : { market, tradeId, ts, price, quantity, side, baseQuantity };
}

/** Lower-case booleans or Python's `True`/`False`, as Binance writes `is_buyer_maker` in its two archives. */
export function booleanText(text: string | undefined): boolean | undefined {
  if (text === 'true' || text === 'True') return true;
  if (text === 'false' || text === 'False') return false;
  return undefined;
}

/** `buy`/`sell` in any case (Bybit writes `Buy`, KuCoin `BUY`). */
export function sideText(text: string | undefined): 'buy' | 'sell' | undefined {
  const lower = text?.toLowerCase();
  return lower === 'buy' || lower === 'sell' ? lower : undefined;
}

/** For archives whose data rows start with a digit: a line that starts with a letter is a header. */
export const headerStartingWithLetter = (line: string): readonly string[] | undefined => (/^[A-Za-z_]/.test(line) ? line.split(',') : undefined);

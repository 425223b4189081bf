// One venue's public bulk archive: its kinds, where it publishes them and how it names them. Each
// venue's file beside this one exports its sources; registry.ts lists them.
import type { ArchiveFormat } from './format.ts';

/** A file's day (`YYYY-MM-DD`) or month (`YYYY-MM`). */
export type Period = { daily: string } | { monthly: string };

export const periodText = (p: Period) => ('daily' in p ? p.daily : p.monthly);

/** What a file's name says: the market (absent for files of every market), kind and period. */
export interface ArchiveName {
  market?: string;
  kind: string;
  period: Period;
}

/** A kind the venue publishes that cannot be imported for this venue (the message names the kind to use). */
export interface RefusedKind {
  refused: string;
}

export interface ArchiveSource {
  /** Our venue id (ingest/venues). */
  venue: string;
  /** The venue's (or the best public) description of the archive. */
  docs: string;
  /** Download host; `VENUE_<ID>_ARCHIVE_URL` overrides it. */
  baseUrl: string;
  /** Kinds by the venue's name; the first is the default. */
  kinds: Record<string, ArchiveFormat | RefusedKind>;
  /** Which periods the venue publishes files for. */
  periods: { daily: boolean; monthly: boolean };
  /** A `.CHECKSUM` (sha256sum line) beside each file. */
  checksums: boolean;
  /** Hours east of UTC of the day a file is named for (OKX cuts its files on UTC+8 days). */
  dayOffsetHours: number;
  /** The path of a file from `baseUrl` (starting with `/`). */
  path(market: string, kind: string, period: Period): string;
  /** What a file's name says, for names as the venue writes them; undefined for another name. */
  parseName(fileName: string): ArchiveName | undefined;
  /** The base and quote tickers of a market symbol, undefined for a symbol of another shape. */
  splitSymbol(symbol: string): { base: string; quote: string } | undefined;
  /** Contracts per base unit come from the venue's instrument list (quantities in contracts). */
  contracts?: boolean;
}

export const isRefusedKind = (k: ArchiveFormat | RefusedKind): k is RefusedKind => 'refused' in k;

/** Base and quote of a symbol written without a separator (BTCUSDT), by the quote tickers tried longest first. */
export function splitBySuffix(symbol: string, quotes: readonly string[]): { base: string; quote: string } | undefined {
  const quote = [...quotes].sort((a, b) => b.length - a.length).find((q) => symbol.length > q.length && symbol.endsWith(q));
  return quote ? { base: symbol.slice(0, -quote.length), quote } : undefined;
}

/** Quote tickers of the symbols written without a separator: the followed ones and others a symbol may end with. */
export const concatenatedQuotes = ['USDT', 'USDC', 'USD', 'FDUSD', 'TUSD', 'BUSD', 'DAI', 'EUR', 'TRY', 'BRL', 'BTC', 'ETH', 'BNB'];

/** `YYYY-MM-DD` or `YYYY-MM`. */
export function periodOf(text: string): Period | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return { daily: text };
  if (/^\d{4}-\d{2}$/.test(text)) return { monthly: text };
  return undefined;
}

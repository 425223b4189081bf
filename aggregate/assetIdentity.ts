// Which discovered assets might be the same asset as another (aggregate/METHODOLOGY.md, "Discovered
// assets"). Nothing here merges anything: a discovered asset stays apart (its own id) until the
// catalog maps its venue ticker; these rules say which ones an operator should look at, and what
// the prices say about them. Pure functions: the report route reads the prices.

/**
 * Two markets whose unit prices differ by more than this are not one asset: cross-venue prices of
 * one asset differ by basis points to a few percent on thin markets, a colliding ticker by far more.
 */
export const samePriceBound = 0.05;

/** Scale prefixes venues put before a ticker to quote a multiple of a tiny-priced asset (1000PEPE, 1MBABYDOGE). */
const scalePrefixes: readonly [prefix: string, scale: number][] = [
  ['1000000', 1_000_000],
  ['100000', 100_000],
  ['10000', 10_000],
  ['1000', 1_000],
  ['1m', 1_000_000],
];

/** A ticker as a venue lists it, split into the asset's own ticker and how many of it one listed unit is. */
export interface ScaledTicker {
  ticker: string;
  scale: number;
}

/**
 * `1000pepe` → pepe × 1000; a ticker without such a prefix (or nothing left after it) is itself × 1.
 * A prefix is a hypothesis, not a fact (`1000sats` is also an asset's own name): the prices decide.
 */
export function scaledTicker(ticker: string): ScaledTicker {
  const lower = ticker.toLowerCase();
  for (const [prefix, scale] of scalePrefixes) {
    const rest = lower.slice(prefix.length);
    if (lower.startsWith(prefix) && /^[a-z][a-z0-9-]*$/.test(rest)) return { ticker: rest, scale };
  }
  return { ticker: lower, scale: 1 };
}

/** One asset as the report sees it: its ticker, the scale of its listed unit, and its USD index price (null: none now). */
export interface IdentityMember {
  id: string;
  /** The catalog's asset, or a discovered one (with the venue that lists it). */
  kind: 'catalog' | 'discovered';
  venue: string | null;
  /** Ticker as listed (lower case). */
  ticker: string;
  scale: number;
  price: number | null;
  /** The operator looked and decided it is its own asset (infra/catalog/identities.ts, `apart`). */
  decidedApart?: boolean;
  /** A retired id's delisting day (infra/catalog/discovered.ts): its price is of its last day of trading. */
  delistedOn?: string;
}

export type Verdict = 'agrees' | 'disagrees' | 'unpriced';

export interface IdentityCandidate {
  id: string;
  /** Price of one unit of the asset (the listed price over its scale), USD; null when either side has no price. */
  unitPrice: number | null;
  /** Relative difference of the unit prices, |a/b − 1| on the larger side; null when either side has no price. */
  deviation: number | null;
  verdict: Verdict;
}

export interface IdentityRow {
  id: string;
  venue: string | null;
  ticker: string;
  /** The asset's own ticker and the scale read from the listed one. */
  base: ScaledTicker;
  unitPrice: number | null;
  /** Other assets (catalog or discovered) with the same base ticker. */
  candidates: IdentityCandidate[];
  /**
   * distinct: no other asset has this base ticker; ambiguous: another has, and the prices agree (or
   * cannot be compared yet): kept apart until an operator decides; apart: every other one's price
   * disagrees beyond the bound, so they are different assets, or the operator decided so.
   */
  state: 'distinct' | 'ambiguous' | 'apart';
  /** The operator's decision, where the state is one. */
  decided: boolean;
  /** A retired id (its markets left the venue's listing): the day they did; null for a listed one. */
  delistedOn: string | null;
}

const unitPrice = (m: IdentityMember) => (m.price === null ? null : m.price / m.scale);

/** Relative difference of two positive prices, the larger over the smaller, minus one. */
export function priceDeviation(a: number, b: number): number {
  return Math.max(a, b) / Math.min(a, b) - 1;
}

function compare(a: IdentityMember, b: IdentityMember): IdentityCandidate {
  const pa = unitPrice(a);
  const pb = unitPrice(b);
  if (pa === null || pb === null || pa <= 0 || pb <= 0) return { id: b.id, unitPrice: pb, deviation: null, verdict: 'unpriced' };
  const deviation = priceDeviation(pa, pb);
  return { id: b.id, unitPrice: pb, deviation, verdict: deviation <= samePriceBound ? 'agrees' : 'disagrees' };
}

/**
 * One row per discovered asset: the assets sharing its base ticker (scale prefixes read off) and
 * what their prices say. Rows are ordered ambiguous first, then apart, then distinct, by id.
 */
export function identityReport(members: readonly IdentityMember[]): IdentityRow[] {
  const byBase = new Map<string, IdentityMember[]>();
  for (const m of members) {
    const base = scaledTicker(m.ticker).ticker;
    byBase.set(base, [...(byBase.get(base) ?? []), m]);
  }
  const rows = members
    .filter((m) => m.kind === 'discovered')
    .map((m): IdentityRow => {
      const base = scaledTicker(m.ticker);
      const candidates = (byBase.get(base.ticker) ?? []).filter((other) => other.id !== m.id).map((other) => compare(m, other));
      const decided = candidates.length > 0 && m.decidedApart === true;
      const state = candidates.length === 0 ? 'distinct' : decided || candidates.every((c) => c.verdict === 'disagrees') ? 'apart' : 'ambiguous';
      return { id: m.id, venue: m.venue, ticker: m.ticker, base, unitPrice: unitPrice(m), candidates, state, decided, delistedOn: m.delistedOn ?? null };
    });
  const order = { ambiguous: 0, apart: 1, distinct: 2 };
  return rows.sort((a, b) => order[a.state] - order[b.state] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

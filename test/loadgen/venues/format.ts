// What a venue's format is to the load generator, and the helpers every format shares: the
// recorded fixtures the templates come from (ingest/venues/<venue>/__fixtures__, sources in their
// SOURCES.md), request parsing, and clocks that format a time once per millisecond, not per frame.
import { fixture } from '../../../ingest/__tests__/fixtures.ts';
import type { BookChange, Level, LoadMarket, TradePrint } from '../market.ts';

/** One websocket client of a generated venue. */
export interface LoadClient {
  /** `trades:<symbol>`, `books:<symbol>`, `heartbeats`. */
  topics: Set<string>;
  /** Connection-wide message counter (Coinbase). */
  sequence: number;
  send(text: string): void;
}

/** One websocket frame, or several that the venue sends for one event (Bitfinex: a row per level, then a checksum). */
export type Frames = string | readonly string[];

export interface LoadVenueFormat {
  /** The native venue id the collector has. */
  id: string;
  /**
   * The venue's symbol and quote for a base ticker. `inverse`: the venue counts quantities in
   * contracts worth 1 unit of the quote (BitMEX's inverse perpetuals), whole numbers.
   */
  market(base: string): { symbol: string; quote: string; inverse?: boolean };
  /** A REST request (`url` names the host the client reached): the JSON body to answer, undefined for 404. */
  rest(url: URL, markets: ReadonlyMap<string, LoadMarket>): unknown;
  /** What the venue sends unasked when a client connects (a welcome). */
  open?(client: LoadClient): void;
  /** A frame from the client: subscriptions (into `client.topics`) and pings, answered through `client.send`. */
  message(client: LoadClient, text: string, markets: ReadonlyMap<string, LoadMarket>): void;
  /** Frames that carry a per-connection counter are rendered for each client; the others once. */
  perClient: boolean;
  trade(m: LoadMarket, t: TradePrint, now: number, client: LoadClient): Frames;
  book(m: LoadMarket, change: BookChange, now: number, client: LoadClient): Frames;
  /** Once a second to clients subscribed to `heartbeats`. */
  heartbeat?(now: number, client: LoadClient): string;
  /** The trade id the collector stores for trade number `n` of a market. */
  tradeId(n: number): string;
}

/** A fixture, copied: formats put slots into it. */
export const recorded = <T>(venue: string, name: string) => structuredClone(fixture(venue, name)) as T;

/** The frames of a `{ at, text }` recording (cryptofeed's), parsed. */
export const recordedSession = <T = Record<string, unknown>>(venue: string, name: string) => recorded<{ text: string }[]>(venue, name).map((f) => JSON.parse(f.text) as T);

export const levelsJson = (levels: readonly Level[]) => JSON.stringify(levels);

export const parseRequest = (text: string): Record<string, unknown> | undefined => {
  try {
    const json: unknown = JSON.parse(text);
    return typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

export const bySymbol = (markets: ReadonlyMap<string, LoadMarket>, symbol: unknown) => (typeof symbol === 'string' ? markets.get(symbol) : undefined);

/** ISO 8601 time of `now`, formatted once per millisecond. */
export function isoClock(): (now: number) => string {
  let at = 0;
  let iso = '';
  return (now) => (now === at ? iso : ((at = now), (iso = new Date(now).toISOString())));
}

/** Decimals a venue's number text carries ("90001.0": 1). */
export const decimalsOf = (text: string) => (text.includes('.') ? text.length - text.indexOf('.') - 1 : 0);

import { readFileSync } from 'node:fs';

/** A venue's recorded-format fixture, from `ingest/venues/<venue>/__fixtures__/`. */
export function fixture(venue: string, name: string): unknown {
  return JSON.parse(readFileSync(new URL(`../venues/${venue}/__fixtures__/${name}`, import.meta.url), 'utf8'));
}

/** The frames of a `ws_*.json` fixture as text, as they come off the socket (strings stay as they are: garbage frames). */
export function frames(venue: string, name: string): string[] {
  return (fixture(venue, name) as unknown[]).map((f) => (typeof f === 'string' ? f : JSON.stringify(f)));
}

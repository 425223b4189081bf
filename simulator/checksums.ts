// The book checksums the simulated OKX, Kraken and Bitfinex send, written from each venue's own
// documentation and sharing no code with the collectors that verify them: a wrong rule on either
// side then shows as a failed check in the socket tests instead of agreeing with itself.
import { crc32 } from 'node:zlib';

/** A level as [price, size] text, best first. */
type Level = readonly [string, string];

/** CRC32 as a signed 32-bit integer: `| 0` reinterprets the unsigned value's bits. */
const signedCrc32 = (text: string) => crc32(text) | 0;

/** Bid and ask fields alternated level by level (bid, ask, bid, ask...); a side that runs out leaves the other to continue. */
function interleaved(bids: readonly (readonly string[])[], asks: readonly (readonly string[])[], depth: number): string[] {
  const fields: string[] = [];
  for (let i = 0; i < depth; i++) {
    if (i < bids.length) fields.push(...bids[i]!);
    if (i < asks.length) fields.push(...asks[i]!);
  }
  return fields;
}

/**
 * OKX v5 `books`: the best 25 bids and 25 asks interleaved as bid price:size:ask price:size..., in
 * the strings the venue sends, joined with ':'; CRC32 as a signed 32-bit integer.
 */
export function okxBookChecksum(bids: readonly Level[], asks: readonly Level[]): number {
  return signedCrc32(interleaved(bids, asks, 25).join(':'));
}

/** A Kraken price or quantity at the pair's precision, without its decimal point and leading zeros. */
const krakenDigits = (value: string) => value.replace('.', '').replace(/^0+/, '');

/**
 * Kraken websocket v2 (and v1) `book`: the 10 lowest asks, low to high, then the 10 highest bids,
 * high to low, each price then quantity as {@link krakenDigits}, all concatenated; CRC32 unsigned.
 * Levels must be the venue's text at the pair's precision (trailing zeros kept).
 */
export function krakenBookChecksum(bids: readonly Level[], asks: readonly Level[]): number {
  const text = (levels: readonly Level[]) => levels.slice(0, 10).map(([price, qty]) => krakenDigits(price) + krakenDigits(qty)).join('');
  return crc32(text(asks) + text(bids));
}

/**
 * Bitfinex websocket v2 P0 `book`: the 25 highest bids and 25 lowest asks interleaved as
 * price:amount, amounts signed as the venue sends them (asks negative), numbers written as they
 * go on the wire (JSON), joined with ':'; CRC32 as a signed 32-bit integer.
 */
export function bitfinexBookChecksum(bids: readonly (readonly [number, number])[], asks: readonly (readonly [number, number])[]): number {
  const wire = (rows: readonly (readonly [number, number])[]) => rows.map((row) => row.map((n) => JSON.stringify(n)));
  return signedCrc32(interleaved(wire(bids), wire(asks), 25).join(':'));
}

// The simulator's book checksums against values neither it nor the collectors computed: books
// recorded from the live venues (with the checksums the venues sent), and the worked examples of
// the venues' documentation. The books are kept in the simulator's own structure (price -> size
// text, sorted by market.ts's sortedLevels).
import { readFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { bitfinexBookChecksum, krakenBookChecksum, okxBookChecksum } from '../checksums.ts';
import { sortedLevels } from '../market.ts';

interface RecordedFrame {
  at: number;
  text: string;
}
const collectors = new URL('../../ingest/', import.meta.url);
/** A fixture beside a venue's collector: data only, none of the collector's code. */
const fixture = (venue: string, file: string): unknown => JSON.parse(readFileSync(new URL(`venues/${venue}/__fixtures__/${file}`, collectors), 'utf8'));

/** A side of a recorded book: price text -> size text; a size of zero removes the level. */
function apply(side: Map<string, string>, levels: readonly (readonly string[])[]): void {
  for (const [price, size] of levels) {
    if (Number(size) === 0) side.delete(price!);
    else side.set(price!, size!);
  }
}

describe('OKX book checksum', () => {
  test("the documentation's worked examples: interleaved bid:ask, a short side skipped, signed", () => {
    // The two books of OKX's checksum guide (3366.1:7:3366.8:9:...), with the values its earlier (OKEx v3) guide gave for them.
    expect(okxBookChecksum([['3366.1', '7'], ['3366', '6']], [['3366.8', '9'], ['3368', '8']])).toBe(-1881014294);
    expect(okxBookChecksum([['3366.1', '7']], [['3366.8', '9'], ['3368', '8'], ['3372', '8']])).toBe(831078360);
  });

  test('every checksum OKX sent in a recorded BTC-USDT session (snapshot of 400 levels, then updates)', () => {
    const bids = new Map<string, string>();
    const asks = new Map<string, string>();
    const checked: number[] = [];
    for (const frame of fixture('okx', 'ws_recorded_cryptofeed.json') as RecordedFrame[]) {
      const message = JSON.parse(frame.text);
      if (message.arg?.channel !== 'books' || !message.data) continue;
      const [data] = message.data;
      if (message.action === 'snapshot') {
        bids.clear();
        asks.clear();
      }
      apply(bids, data.bids);
      apply(asks, data.asks);
      expect(okxBookChecksum(sortedLevels(bids, 'bid', 25), sortedLevels(asks, 'ask', 25)), `frame at ${frame.at}`).toBe(data.checksum);
      checked.push(data.checksum);
    }
    // Enough frames, and both signs: an unsigned rule would fail the negative ones.
    expect(checked.length).toBeGreaterThan(90);
    expect(checked.filter((c) => c < 0).length).toBeGreaterThan(10);
    expect(checked.filter((c) => c > 0).length).toBeGreaterThan(10);
  });
});

describe('Kraken book checksum', () => {
  test('every checksum Kraken sent in a recorded XBT/CHF book-1000 session (websocket v1: the same checksum as v2)', () => {
    const bids = new Map<string, string>();
    const asks = new Map<string, string>();
    let checked = 0;
    let aboveInt32 = 0;
    for (const frame of fixture('kraken', 'ws_recorded_v1_cryptofeed.json') as RecordedFrame[]) {
      const message = JSON.parse(frame.text);
      // [channelID, {as, bs} | {a}, {b, c}?, "book-1000", pair]: the book parts are the objects after the channel.
      if (!Array.isArray(message)) continue;
      const parts = message.slice(1).filter((p: unknown) => typeof p === 'object') as Record<string, string[][] | string>[];
      let checksum: string | undefined;
      for (const part of parts) {
        if (part.as || part.bs) {
          bids.clear();
          asks.clear();
        }
        apply(asks, (part.as ?? part.a ?? []) as string[][]);
        apply(bids, (part.bs ?? part.b ?? []) as string[][]);
        checksum ??= part.c as string | undefined;
      }
      if (checksum === undefined) continue;
      expect(krakenBookChecksum(sortedLevels(bids, 'bid', 10), sortedLevels(asks, 'ask', 10)), `frame at ${frame.at}`).toBe(Number(checksum));
      checked++;
      if (Number(checksum) > 2 ** 31) aboveInt32++;
    }
    expect(checked).toBeGreaterThan(250);
    // Unsigned: a signed rule would fail these.
    expect(aboveInt32).toBeGreaterThan(10);
  });
});

describe('Bitfinex book checksum', () => {
  // No public recording carries Bitfinex's cs frames, and its documentation gives the rule but no
  // worked value: these pin the documented string (bid, ask alternated; asks negative; ':') to the
  // checksum of that string, so they check the layout, not the venue's own output.
  test("the documented layout: the 25 best of each side alternated as price:amount, asks' amounts negative, signed CRC32", () => {
    const bids = Array.from({ length: 30 }, (_, i) => [100 - i, 1 + i / 10] as const);
    const asks = Array.from({ length: 27 }, (_, i) => [101 + i, -(2 + i / 100)] as const);
    const documented = Array.from({ length: 25 }, (_, i) => `${bids[i]![0]}:${bids[i]![1]}:${asks[i]![0]}:${asks[i]![1]}`).join(':');
    expect(documented.startsWith('100:1:101:-2:99:1.1:102:-2.01:')).toBe(true);
    expect(bitfinexBookChecksum(bids, asks)).toBe(crc32(documented) | 0);
    // A side that runs out leaves the other to continue.
    expect(bitfinexBookChecksum([[100, 0.5]], [[101, -1], [102, -0.25]])).toBe(crc32('100:0.5:101:-1:102:-0.25') | 0);
  });

  test('the hand-written fixtures whose checksums were computed outside our code (Python zlib.crc32)', () => {
    // ws_book_snapshot.json, then ws_book_update.json: P0 rows [PRICE, COUNT, AMOUNT], COUNT 0 deletes.
    const bids = new Map<number, number>();
    const asks = new Map<number, number>();
    const frames = [fixture('bitfinex', 'ws_book_snapshot.json'), fixture('bitfinex', 'ws_book_update.json')].flat() as unknown[];
    const row = ([price, count, amount]: number[]) => {
      const side = amount! > 0 ? bids : asks;
      if (count === 0) side.delete(price!);
      else side.set(price!, amount!);
    };
    const top = (side: Map<number, number>, best: 1 | -1) => [...side].sort((a, b) => best * (b[0] - a[0])).slice(0, 25);
    let checked = 0;
    for (const frame of frames) {
      if (!Array.isArray(frame)) continue;
      const [, body, value] = frame as [number, unknown, unknown];
      if (body === 'cs') {
        expect(bitfinexBookChecksum(top(bids, 1), top(asks, -1))).toBe(value);
        checked++;
      } else if (Array.isArray(body) && Array.isArray(body[0])) (body as number[][]).forEach(row);
      else if (Array.isArray(body)) row(body as number[]);
    }
    expect(checked).toBe(2);
  });
});

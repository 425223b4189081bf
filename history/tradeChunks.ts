// A chunk of imported trades of one market as the engine reads it: tab-separated text with the
// columns that vary per row, the market's own columns bound as parameters. chDB reads it from a
// file (`file()`, parsed on every core, as fast as its own INSERT ... SELECT from a CSV: the
// same path); a ClickHouse server gets whole rows as the request body. Either way the insert runs
// the views of `trades` like any other.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Store } from '../infra/store.ts';

/** One insert: trades of one market, as TSV lines `trade_id, ts (unix ms), price, quantity, side`. */
export interface TradeChunk {
  venue: string;
  market: string;
  asset: string;
  quote: string;
  /** Stored as every row's received_at: when the import read the file. */
  receivedAt: number;
  /** `insert_deduplication_token`: the file's sha256, the chunk's index and the market. */
  token: string;
  rows: number;
  /** The lines, latin1 (ASCII) text. */
  tsv: Buffer;
}

/** The chunk's own columns: what a line holds. */
// side as text: the Enum8 column takes it on insert.
const structure = 'trade_id String, ts Int64, price Float64, quantity Float64, side String';

const insertSelect = (from: string) => `INSERT INTO trades (venue, market, asset, quote, trade_id, ts, received_at, price, quantity, side)
SELECT {venue:String}, {market:String}, {asset:String}, {quote:String}, trade_id, fromUnixTimestamp64Milli(ts, 'UTC'),
       fromUnixTimestamp64Milli({receivedAt:Int64}, 'UTC'), price, quantity, side
FROM ${from}`;

const serverColumns = ['venue', 'market', 'asset', 'quote', 'trade_id', 'ts', 'received_at', 'price', 'quantity', 'side'] as const;

/** Unix ms as the seconds-with-fraction text a DateTime64(3) column reads. */
const secondsText = (ms: number) => `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;

/**
 * The chunk as whole `trades` rows, for a ClickHouse server: an insert's body is parsed as the
 * table's own columns (INSERT ... SELECT FROM input() would keep the chunk as it is, but chDB, behind
 * the test's ClickHouse-HTTP front, inserts nothing from it).
 */
function serverRows(c: TradeChunk): Buffer {
  const fixed = `${c.venue}\t${c.market}\t${c.asset}\t${c.quote}\t`;
  const received = secondsText(c.receivedAt);
  const out = new TsvBuffer();
  for (const { line, id, ts } of tsvRows(c.tsv)) {
    const rest = line.slice(line.indexOf('\t', id.length + 1) + 1);
    out.append(`${fixed}${id}\t${secondsText(ts)}\t${received}\t${rest}\n`);
  }
  return Buffer.from(out.bytes());
}

const paramsOf = (c: TradeChunk) => ({ venue: c.venue, market: c.market, asset: c.asset, quote: c.quote, receivedAt: c.receivedAt });

/** One line of a chunk. Ids are checked by the formats: no tab, line break or backslash. */
export const tsvLine = (tradeId: string, ts: number, price: string, quantity: string, side: 'buy' | 'sell') => `${tradeId}\t${ts}\t${price}\t${quantity}\t${side}\n`;

/**
 * A chunk's lines as they are written, in one growing buffer: millions of rows kept as strings in
 * arrays until their insert would cost more in garbage collection than the parse itself.
 */
export class TsvBuffer {
  #bytes = Buffer.allocUnsafe(1 << 20);
  #length = 0;
  rows = 0;

  append(line: string): void {
    if (this.#length + line.length > this.#bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.#bytes.length * 2, this.#length + line.length));
      this.#bytes.copy(grown, 0, 0, this.#length);
      this.#bytes = grown;
    }
    this.#length += this.#bytes.write(line, this.#length, 'latin1');
    this.rows += 1;
  }

  /** The lines written (a view, valid until the next append). */
  bytes(): Buffer {
    return this.#bytes.subarray(0, this.#length);
  }
}

/** The id and time of each line of a chunk, for the rare chunk the store holds some of. */
export function* tsvRows(tsv: Buffer): Generator<{ line: string; id: string; ts: number }> {
  for (const line of tsv.toString('latin1').split('\n')) {
    if (line === '') continue;
    const idEnd = line.indexOf('\t');
    yield { line, id: line.slice(0, idEnd), ts: Number(line.slice(idEnd + 1, line.indexOf('\t', idEnd + 1))) };
  }
}

/** A private directory for the files chDB reads chunks from (removed by `close`). */
export function chunkSpool(): { dir: string; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'mds-import-'));
  return { dir, close: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Inserts a chunk into the store's `trades`: on chDB (`embedded`) through a file in the directory
 * `spoolDir` gives, on a ClickHouse server as the request body. The same settings on every insert
 * (chDB keeps them on its session), the token reset after.
 */
export async function insertTradeChunk(store: Store, chunk: TradeChunk, { embedded, spoolDir }: { embedded: boolean; spoolDir: () => string }): Promise<void> {
  if (chunk.rows === 0) return;
  const settings = { async_insert: 0, insert_deduplication_token: chunk.token } as const;
  if (!embedded) {
    await store.client.insert({ table: 'trades', columns: [...serverColumns], values: Readable.from([serverRows(chunk)], { objectMode: false }), format: 'TabSeparated', clickhouse_settings: settings });
    return;
  }
  const path = join(spoolDir(), `${randomBytes(8).toString('hex')}.tsv`);
  writeFileSync(path, chunk.tsv, { mode: 0o600 });
  try {
    await store.client.command({ query: insertSelect(`file({path:String}, 'TabSeparated', {structure:String})`), query_params: { ...paramsOf(chunk), path, structure }, clickhouse_settings: settings });
  } finally {
    rmSync(path, { force: true });
    await store.client.command({ query: 'SELECT 1', clickhouse_settings: { async_insert: 0, insert_deduplication_token: '' } });
  }
}

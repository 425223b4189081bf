// The import of one archive file: read, parse (the venue's format), put each trade in the units
// and identity the collector uses, keep what the store does not hold, insert in chunks with tokens
// made of the file's sha256 and the chunk's index, and record the progress after each chunk
// (import_files), so that a run cut short resumes at the next chunk and adds nothing twice.
import { decimalProduct } from '../ingest/decimal.ts';
import { lineBatches, fileSha256 } from './archiveFile.ts';
import { isRefusal, type ArchiveFormat, type ArchiveTrade, type LineContext, type RowRefusal } from './archives/format.ts';
import { periodText, type ArchiveSource, type Period } from './archives/source.ts';
import { addRows, loadImportFile, noRows, saveImportFile, type ImportFileRecord, type RowCounts, type Span } from './importFiles.ts';
import type { ImportTarget } from './importTarget.ts';
import { resolveMarket, type ContractSizes, type ImportMarket } from './markets.ts';
import { TsvBuffer, tsvLine, tsvRows } from './tradeChunks.ts';

/** Data lines per chunk: half a million trades, ~20 MB of text, inserted at chDB's bulk rate (smaller blocks cost the views more per row). */
export const defaultChunkRows = 500_000;

/** Trades this recent belong to the live collectors: the sink trusts that nothing newer than what it last stored exists. */
export const liveHorizonMs = 2 * 3_600_000;

export const refusals = {
  tooNew: 'newer than 2 hours ago: left to the live collectors (their sink trusts what it last stored of a market)',
  otherMarket: 'another market than the ones asked (--market)',
  covered: 'inside the span the store held of the market (its trades there have other ids: not stored twice)',
} as const;

/** One file to import, with what its name (or the download plan) says. */
export interface FileJob {
  path: string;
  name: string;
  source: ArchiveSource;
  format: ArchiveFormat;
  /** The file's market, from its name; absent for files of every market (BitMEX). */
  market?: string;
  /** For files of every market: the ones to import. */
  markets?: ReadonlySet<string>;
  period: Period;
}

export interface ImportSettings {
  target: ImportTarget;
  /** Trades newer than `now - liveHorizonMs` are refused. */
  now: number;
  /**
   * How recent an imported trade may be (default `liveHorizonMs`): 0 where no trade sink runs beside
   * the import, so none trusts what it last stored (the demo imports its history before its sinks start).
   */
  liveHorizonMs?: number;
  /**
   * The index history is computed from this time on (unix ms), not from the first imported trade:
   * the demo's sparse weeks need no index before the last day (its 30 d changes are read from candles).
   */
  indexFrom?: number;
  /** Read the file again even when it was imported whole (what the store holds is still not stored twice). */
  force: boolean;
  contracts?: ContractSizes;
  /** A base the catalog does not map is imported as the discovered asset the collector would store it under (INGEST_DISCOVER). */
  discover?: boolean;
  chunkRows?: number;
  /** Called as lines are read: `fraction` of the file done, rows read so far. */
  onProgress?: (fraction: number, rowsRead: number) => void;
}

export interface FileOutcome {
  name: string;
  /** `imported`: read now; `already imported`: its sha256 was imported whole before (not read). */
  state: 'imported' | 'already imported';
  counts: RowCounts;
  stored?: Span;
  record: ImportFileRecord;
}

const widen = (span: Span | undefined, ts: number): Span => (span ? { from: Math.min(span.from, ts), to: Math.max(span.to, ts) } : { from: ts, to: ts });

/** The trade-time span a file is named for: its day or month at the venue's UTC offset. */
export function periodSpan(period: Period, dayOffsetHours: number): Span {
  const offset = dayOffsetHours * 3_600_000;
  if ('daily' in period) {
    const from = Date.parse(`${period.daily}T00:00:00Z`) - offset;
    return { from, to: from + 86_400_000 - 1 };
  }
  const [y, m] = period.monthly.split('-').map(Number) as [number, number];
  return { from: Date.UTC(y, m - 1, 1) - offset, to: Date.UTC(y, m, 1) - offset - 1 };
}

function countRefusal(counts: RowCounts, reason: string): void {
  counts.refused.set(reason, (counts.refused.get(reason) ?? 0) + 1);
}

const refusedMarket = (m: ImportMarket | RowRefusal): m is RowRefusal => 'refused' in m;

/** Trades of one market in a chunk, before the store is asked which it holds. */
interface MarketRows {
  market: ImportMarket;
  tsv: TsvBuffer;
  from: number;
  to: number;
  /** Ids so far strictly increasing as numbers (digits only): then none repeats in the chunk. */
  increasing: boolean;
  lastId: string;
}

/** `b` is a larger whole number than `a`, both written in digits without leading zeros. */
const numericallyAfter = (a: string, b: string) => b.length > a.length || (b.length === a.length && b > a);
const digitsOnly = /^[1-9]\d*$/;

/** One chunk: its rows per market, and the counts of its lines. */
interface Chunk {
  index: number;
  counts: RowCounts;
  markets: Map<string, MarketRows>;
}

/** Ids the store holds of a market between two times (unix ms). */
async function heldIds(target: ImportTarget, m: ImportMarket, from: number, to: number): Promise<Set<string>> {
  const rows = await target.rows<{ id: string }>(
    `SELECT trade_id AS id FROM trades
     WHERE asset = {asset:String} AND venue = {venue:String} AND market = {market:String}
       AND ts BETWEEN fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    { asset: m.asset, venue: m.venue, market: m.symbol, from, to },
  );
  return new Set(rows.map((r) => r.id));
}

/** The first and last trade the store holds of a market in a span, if any. */
async function heldSpan(target: ImportTarget, m: ImportMarket, span: Span): Promise<Span | undefined> {
  const [row] = await target.rows<{ n: number; from: number; to: number }>(
    `SELECT count() AS n, toUnixTimestamp64Milli(min(ts)) AS from, toUnixTimestamp64Milli(max(ts)) AS to FROM trades
     WHERE asset = {asset:String} AND venue = {venue:String} AND market = {market:String}
       AND ts BETWEEN fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    { asset: m.asset, venue: m.venue, market: m.symbol, from: span.from, to: span.to },
  );
  return row && row.n > 0 ? { from: row.from, to: row.to } : undefined;
}

/** Reads one file into the store (see the module comment). */
export class FileImport {
  readonly #job: FileJob;
  readonly #settings: ImportSettings;
  readonly #chunkRows: number;
  readonly #markets = new Map<string, ImportMarket | RowRefusal>();
  readonly #receivedAt = Date.now();
  #record!: ImportFileRecord;
  #resumeFrom = 0;
  /** The insert in flight: the next chunk is parsed meanwhile, never more than one ahead. */
  #inFlight: Promise<void> = Promise.resolve();

  constructor(job: FileJob, settings: ImportSettings) {
    this.#job = job;
    this.#settings = settings;
    this.#chunkRows = settings.chunkRows ?? defaultChunkRows;
  }

  async run(): Promise<FileOutcome> {
    const { target, force } = this.#settings;
    const sha256 = await fileSha256(this.#job.path);
    const prior = await loadImportFile(target, sha256);
    if (prior && prior.state !== 'reading' && !force) return { name: this.#job.name, state: 'already imported', counts: noRows(), record: prior };
    const resuming = prior?.state === 'reading' && prior.chunkRows === this.#chunkRows && !force;
    this.#resumeFrom = resuming ? prior.chunksDone : 0;
    const { name, source, format } = this.#job;
    this.#record = resuming
      ? { ...prior, name }
      : { sha256, name, venue: source.venue, kind: format.kind, state: 'reading', chunkRows: this.#chunkRows, chunksDone: 0, counts: noRows(), covered: await this.#coveredSpan() };
    await saveImportFile(target, this.#record);
    const before = { ...this.#record.counts, refused: new Map(this.#record.counts.refused) };
    await this.#readLines();
    // The last chunk's record says 'inserted' (one write, not two); a resumed file whose chunks were all done has none.
    if (this.#record.state !== 'inserted') {
      this.#record = { ...this.#record, state: 'inserted' };
      await saveImportFile(target, this.#record);
    }
    // What this run did: the record's counts less those of the attempt it resumed.
    const counts = noRows();
    addRows(counts, this.#record.counts);
    counts.read -= before.read;
    counts.new -= before.new;
    counts.held -= before.held;
    for (const [reason, n] of before.refused) counts.refused.set(reason, (counts.refused.get(reason) ?? 0) - n);
    return { name, state: 'imported', counts, stored: this.#record.stored, record: this.#record };
  }

  /** For kinds whose ids are not the collector's: where the store holds the file's market in the file's span. */
  async #coveredSpan(): Promise<Span | undefined> {
    const { format, market, source, period } = this.#job;
    if (format.identity !== 'uncovered' || market === undefined) return undefined;
    const resolved = this.#marketOf(market);
    return refusedMarket(resolved) ? undefined : heldSpan(this.#settings.target, resolved, periodSpan(period, source.dayOffsetHours));
  }

  #marketOf(symbol: string): ImportMarket | RowRefusal {
    let m = this.#markets.get(symbol);
    if (!m) {
      m = resolveMarket(this.#job.source, symbol, this.#settings.contracts, this.#settings.discover);
      this.#markets.set(symbol, m);
    }
    return m;
  }

  async #readLines(): Promise<void> {
    const { format, market = '', period } = this.#job;
    const context: LineContext = { market, lineNumber: 0, period: periodText(period) };
    let dataLines = 0;
    let chunk: Chunk = { index: 0, counts: noRows(), markets: new Map() };
    for await (const { lines, fraction } of lineBatches(this.#job.path)) {
      for (const line of lines) {
        context.lineNumber += 1;
        if (line === '') continue;
        const columns = format.header(line);
        if (columns) {
          context.columns = columns;
          continue;
        }
        const index = Math.floor(dataLines / this.#chunkRows);
        dataLines += 1;
        if (index !== chunk.index) {
          await this.#flush(chunk);
          chunk = { index, counts: noRows(), markets: new Map() };
        }
        if (index >= this.#resumeFrom) this.#take(chunk, format.parse(line, context));
      }
      this.#settings.onProgress?.(fraction, this.#record.counts.read + chunk.counts.read);
    }
    await this.#flush(chunk, true);
    await this.#inFlight;
  }

  /** One parsed line into its chunk, or its refusal into the chunk's counts. */
  #take(chunk: Chunk, row: ArchiveTrade | RowRefusal | undefined): void {
    const { counts } = chunk;
    counts.read += 1;
    if (row === undefined || isRefusal(row)) return countRefusal(counts, row?.refused ?? 'malformed row');
    if (this.#job.markets && !this.#job.markets.has(row.market)) return countRefusal(counts, refusals.otherMarket);
    const market = this.#marketOf(row.market);
    if (refusedMarket(market)) return countRefusal(counts, market.refused);
    if (row.ts > this.#settings.now - (this.#settings.liveHorizonMs ?? liveHorizonMs)) return countRefusal(counts, refusals.tooNew);
    const quantity = row.baseQuantity ?? (market.contractSize === '1' ? row.quantity : String(decimalProduct(row.quantity, market.contractSize)));
    let rows = chunk.markets.get(row.market);
    if (!rows) chunk.markets.set(row.market, (rows = { market, tsv: new TsvBuffer(), from: row.ts, to: row.ts, increasing: digitsOnly.test(row.tradeId), lastId: '' }));
    else if (rows.increasing) rows.increasing = numericallyAfter(rows.lastId, row.tradeId) && digitsOnly.test(row.tradeId);
    rows.lastId = row.tradeId;
    if (row.ts < rows.from) rows.from = row.ts;
    if (row.ts > rows.to) rows.to = row.ts;
    rows.tsv.append(tsvLine(row.tradeId, row.ts, row.price, quantity, row.side));
  }

  /** Queues the chunk's insert behind the one in flight; returns once that one is done. `last`: the file's last chunk. */
  async #flush(chunk: Chunk, last = false): Promise<void> {
    if (chunk.index < this.#resumeFrom) return;
    const previous = this.#inFlight;
    await previous;
    this.#inFlight = this.#insertChunk(chunk, last);
    // A failed insert surfaces at the next flush (or the end); keep it from being unhandled meanwhile.
    this.#inFlight.catch(() => undefined);
  }

  async #insertChunk(chunk: Chunk, last: boolean): Promise<void> {
    const { target } = this.#settings;
    let stored = this.#record.stored;
    for (const rows of chunk.markets.values()) {
      const kept = await this.#newRows(rows, chunk.counts);
      if (kept.rows === 0) continue;
      stored = widen(widen(stored, kept.from), kept.to);
      const { market } = rows;
      await target.insertTrades({ venue: market.venue, market: market.symbol, asset: market.asset, quote: market.quote, receivedAt: this.#receivedAt, token: `import:${this.#record.sha256}:${chunk.index}:${market.symbol}`, rows: kept.rows, tsv: kept.tsv });
    }
    const counts = noRows();
    addRows(counts, this.#record.counts);
    addRows(counts, chunk.counts);
    this.#record = { ...this.#record, state: last ? 'inserted' : 'reading', chunksDone: chunk.index + 1, counts, stored };
    await saveImportFile(target, this.#record);
  }

  /** The rows to store: not held (by id), not twice in the chunk, and outside the covered span for `uncovered` kinds. */
  async #newRows(rows: MarketRows, counts: RowCounts): Promise<{ tsv: Buffer; rows: number; from: number; to: number }> {
    const held = await heldIds(this.#settings.target, rows.market, rows.from, rows.to);
    const covered = this.#job.format.identity === 'uncovered' ? this.#record.covered : undefined;
    const all = rows.tsv.bytes();
    // The common case, nothing of the market held or covered in the chunk's span: every row, as written.
    if (held.size === 0 && rows.increasing && (!covered || covered.to < rows.from || covered.from > rows.to)) {
      counts.new += rows.tsv.rows;
      return { tsv: all, rows: rows.tsv.rows, from: rows.from, to: rows.to };
    }
    const kept = new TsvBuffer();
    let from = Infinity;
    let to = -Infinity;
    for (const { line, id, ts } of tsvRows(all)) {
      if (held.has(id)) counts.held += 1;
      else if (covered && ts >= covered.from && ts <= covered.to) countRefusal(counts, refusals.covered);
      else {
        held.add(id);
        kept.append(`${line}\n`);
        from = Math.min(from, ts);
        to = Math.max(to, ts);
        counts.new += 1;
      }
    }
    return { tsv: kept.bytes(), rows: kept.rows, from, to };
  }
}

// The demo's SIMULATED past trades (simulator/history.ts) as the venues publish their bulk trade
// archives, so that the demo loads them with `npm run import`'s own code (infra/roles/demo.ts):
// - Binance spot monthly `trades` (https://github.com/binance/binance-public-data): a .zip of
//   `BTCUSDT-trades-2026-10.csv` (id,price,qty,quoteQty,time,isBuyerMaker,isBestMatch; no header;
//   time in µs as from 2025; True/False) and a `.CHECKSUM` beside it (a sha256sum line);
// - Gate spot monthly `deals` (download.gatedata.org, research/trade-history.md §2.9):
//   `BTC_USDT-202610.csv.gz` (time in seconds with µs, id, price, amount, side 1 sell / 2 buy).
// A market's ids end just below the first id the simulator printed live on it, so they never
// collide with the live ones and Binance's live trade numbers follow on from the archive's (its
// collector's restart recovery starts from the last stored number). One file per market and month;
// the current month's runs up to the demo's first start (venues publish a month once it ends).
// A manifest, written last, lists a complete set: a set without one was cut short.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { demoHistoryTrades, stepsOf, tradesOf, type DemoHistoryPlan, type HistoryTrade, type HistoryVenue } from './history.ts';

/** The directory under MDS_DATA_DIR that holds the demo's archives. */
export const demoArchivesDirName = 'simulated-archives';

/** One file of the set, under `<dir>/<venue>/`. */
export interface DemoArchiveFile {
  venue: HistoryVenue;
  name: string;
}

/** A complete set of the demo's archive files. */
export interface DemoArchives {
  dir: string;
  writtenAt: number;
  plan: DemoHistoryPlan;
  /** Trades in the set, and the times of its first and last (unix ms). */
  trades: number;
  from: number;
  to: number;
  files: DemoArchiveFile[];
}

/** How one venue writes a market's month: the file's name, a row, and the file's bytes. */
interface VenueArchive {
  fileName(symbol: string, month: string): string;
  row(trade: HistoryTrade, id: number): string;
  /** The published file of `csv`, named `name`. */
  bytes(name: string, csv: string): Uint8Array;
  /** A `<name>.CHECKSUM` beside the file. */
  checksum: boolean;
}

const binance: VenueArchive = {
  fileName: (symbol, month) => `${symbol}-trades-${month}.zip`,
  row(t, id) {
    const quote = (Number(t.price) * Number(t.quantity)).toFixed(8);
    // isBuyerMaker True: the buyer made the book, the taker sold.
    return `${id},${Number(t.price).toFixed(8)},${Number(t.quantity).toFixed(8)},${quote},${t.ts}000,${t.side === 'sell' ? 'True' : 'False'},True`;
  },
  bytes: (name, csv) => zipSync({ [name.replace(/\.zip$/, '.csv')]: Buffer.from(csv, 'latin1') }),
  checksum: true,
};

const gate: VenueArchive = {
  fileName: (symbol, month) => `${symbol}-${month.replace('-', '')}.csv.gz`,
  row: (t, id) => `${Math.floor(t.ts / 1000)}.${String(t.ts % 1000).padStart(3, '0')}000,${id},${t.price},${t.quantity},${t.side === 'sell' ? 1 : 2}`,
  bytes: (_name, csv) => gzipSync(Buffer.from(csv, 'latin1')),
  checksum: false,
};

const venueArchives: Record<HistoryVenue, VenueArchive> = { binance, gate };

const manifestName = 'manifest.json';

const readme = (archives: Pick<DemoArchives, 'writtenAt' | 'plan'>) => `SIMULATED TRADES: NOT MARKET DATA.

\`npm run demo\` wrote these files on its first start (${new Date(archives.writtenAt).toISOString()}) and imported
them with \`npm run import\`'s code: ${archives.plan.days} days of random walks ending at the demo market
simulator's prices (simulator/history.ts), one trade every ${archives.plan.stepMs / 60_000} minutes on each market, in the
formats the venues publish their bulk trade archives in: binance/ as Binance's spot monthly
\`trades\` (.zip with its .CHECKSUM), gate/ as Gate's spot monthly \`deals\` (.csv.gz). The current
month's files end at that start. A market's trade ids end just below the first id the simulator
printed live on it. ${manifestName} lists the complete set; the store's import_files table says what
was imported.
`;

/** The set written in `dir` before, if it is complete (its manifest is written last). */
export function readDemoArchives(dir: string): DemoArchives | undefined {
  const path = join(dir, manifestName);
  if (!existsSync(path)) return undefined;
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Omit<DemoArchives, 'dir'>;
  return { ...manifest, dir };
}

/** The path of one file of the set. */
export const archivePath = (archives: Pick<DemoArchives, 'dir'>, file: DemoArchiveFile) => join(archives.dir, file.venue, file.name);

/** Written under a temporary name, then renamed: a file of the set is whole or absent. */
async function writeWhole(path: string, bytes: Uint8Array | string): Promise<void> {
  await writeFile(`${path}.part`, bytes);
  await rename(`${path}.part`, path);
}

/** The history's rows, per file: `<venue>/<name>` -> lines, in time order. */
function rowsPerFile(plan: DemoHistoryPlan, firstLiveId: (venue: HistoryVenue, symbol: string) => number): Map<string, { file: DemoArchiveFile; lines: string[] }> {
  const steps = stepsOf(plan);
  const files = new Map<string, { file: DemoArchiveFile; lines: string[] }>();
  const firstIds = new Map<string, number>();
  for (const trade of demoHistoryTrades(plan)) {
    const key = `${trade.venue}/${trade.symbol}`;
    let first = firstIds.get(key);
    if (first === undefined) {
      const live = firstLiveId(trade.venue, trade.symbol);
      if (!(Number.isSafeInteger(live) && live > steps)) throw new RangeError(`${key}: the live trade ids start at ${live}, leaving no room below for ${steps} trades of history`);
      firstIds.set(key, (first = live - steps));
    }
    const name = venueArchives[trade.venue].fileName(trade.symbol, new Date(trade.ts).toISOString().slice(0, 7));
    let entry = files.get(`${trade.venue}/${name}`);
    if (!entry) files.set(`${trade.venue}/${name}`, (entry = { file: { venue: trade.venue, name }, lines: [] }));
    entry.lines.push(venueArchives[trade.venue].row(trade, first + trade.index));
  }
  return files;
}

/**
 * Writes the history of `plan` in `dir` as the venues' archive files, replacing whatever an
 * earlier attempt left there without a manifest. `firstLiveId` is the first trade id the simulator
 * printed live on a market.
 */
export async function writeDemoArchives(dir: string, plan: DemoHistoryPlan, firstLiveId: (venue: HistoryVenue, symbol: string) => number, writtenAt = Date.now()): Promise<DemoArchives> {
  rmSync(dir, { recursive: true, force: true });
  const files: DemoArchiveFile[] = [];
  for (const { file, lines } of rowsPerFile(plan, firstLiveId).values()) {
    const archive = venueArchives[file.venue];
    mkdirSync(join(dir, file.venue), { recursive: true });
    const path = join(dir, file.venue, file.name);
    const bytes = archive.bytes(file.name, `${lines.join('\n')}\n`);
    await writeWhole(path, bytes);
    if (archive.checksum) await writeWhole(`${path}.CHECKSUM`, `${createHash('sha256').update(bytes).digest('hex')}  ${file.name}\n`);
    files.push(file);
  }
  const steps = stepsOf(plan);
  const manifest = { writtenAt, plan, trades: tradesOf(plan), from: plan.endsAt - steps * plan.stepMs, to: plan.endsAt - plan.stepMs, files };
  await writeWhole(join(dir, 'README.txt'), readme(manifest));
  await writeWhole(join(dir, manifestName), `${JSON.stringify(manifest, null, 1)}\n`);
  return { dir, ...manifest };
}

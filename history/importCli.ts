// `npm run import`: the venues' public bulk trade archives into the service's tables (README,
// "Importing history"). The store is the running node's, through its store channel, when a node
// holds the embedded store; otherwise it is opened here (embedded, or CLICKHOUSE_URL).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { answerHelpAndVersion } from '../infra/cli.ts';
import { ConfigError, loadConfig, type Config } from '../infra/config.ts';
import { createLogger } from '../infra/log.ts';
import { redactCredentials } from '../infra/redact.ts';
import { StoreInUseError } from '../infra/store.ts';
import { StoreChannelAbsentError, storeChannelClient, storeSocketPath } from '../infra/storeChannel.ts';
import type { ArchiveFormat } from './archives/format.ts';
import { archiveSources, findArchiveSource } from './archives/registry.ts';
import { isRefusedKind, periodText, type ArchiveSource, type Period } from './archives/source.ts';
import { channelTarget } from './channelTarget.ts';
import { openDirectTarget } from './directTarget.ts';
import { archiveBaseUrl, archiveUrlVariable, downloadFile, plannedPeriods } from './download.ts';
import type { FileJob } from './importFile.ts';
import { importFiles } from './importRun.ts';
import type { ImportTarget } from './importTarget.ts';
import { loadContractSizes, type ContractSizes } from './markets.ts';
import { fileLine, ProgressReporter, summaryLines } from './progress.ts';

const kindsLine = (s: ArchiveSource) => Object.entries(s.kinds).map(([k, f]) => (isRefusedKind(f) ? `${k} (refused)` : k)).join(', ');

const usage = `usage: npm run import -- --venue <id> --market <symbol> --from <YYYY-MM-DD> --to <YYYY-MM-DD> [--kind <kind>]
       npm run import -- --venue <id> [--market <symbols>] FILE...
Loads a venue's public bulk trade archive into trades (and the candles, market seconds, first
prints and price extremes the store derives from it), then computes the index history of the span.
The first form downloads the files (monthly where a whole month is asked and the venue publishes
them, daily otherwise) into --dir and verifies each against its .CHECKSUM where the venue
publishes one (a mismatch refuses the file); the second imports files as published (.zip,
.csv.gz) or the .csv inside, the market, kind and day read from the file's name.
options:
  --venue <id>           the venue (our id):
${archiveSources.map((s) => `                           ${s.venue.padEnd(16)} ${kindsLine(s)}`).join('\n')}
  --kind <kind>          the archive kind (default: the first listed)
  --market <symbols>     the venue's symbol(s), comma-separated (BTCUSDT, BTC-USDT-SWAP; bitmex files
                         hold every market: default XBTUSD)
  --from, --to <day>     the days to download, inclusive (UTC; OKX files are UTC+8 days)
  --dir <dir>            where downloads are kept (default ./archives); a file already there with
                         its checksum is not fetched again
  --force                read files again that were imported whole before (found by sha256)
  --help, -h             this text
  --version              the service's version
What is stored: a trade is (venue, market, trade id), the id the collector of that venue stores,
quantities in base units, side the taker's; what the store holds is not stored again, so a second
import adds nothing. What is refused, counted per reason in the summary:
  - binance-futures trades (ids of fills, the collector stores aggTrade ids): import aggTrades;
  - binance aggTrades of several fills (the collector stores each fill): import trades;
  - kinds whose ids are not the collector's (bybit spot, okx, kucoin, gate): rows inside the span
    the store held of the market when the file was first read;
  - markets the catalog does not map, quotes the collector does not follow;
  - trades newer than 2 hours ago (the live collectors' own).
The store: with a node running on the embedded store, through its channel <MDS_DATA_DIR>/store.sock;
with none, the embedded store is opened here; CLICKHOUSE_URL: that server. The store must be migrated.
Downloads: VENUE_<ID>_ARCHIVE_URL overrides a venue's host (e.g. ${archiveUrlVariable('binance')}).`;

/** Exit code 2 with the usage: the arguments are wrong. */
class UsageError extends Error {
  override name = 'UsageError';
}

/** Exit code 1 with a one-line message: what went wrong and what to do, never a stack. */
class CliError extends Error {
  override name = 'CliError';
}

interface Args {
  source: ArchiveSource;
  kind?: string;
  markets?: string[];
  from?: string;
  to?: string;
  dir: string;
  force: boolean;
  files: string[];
}

function parse(argv: string[]): Args {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { venue: { type: 'string' }, kind: { type: 'string' }, market: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, dir: { type: 'string' }, force: { type: 'boolean' } },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (!values.venue) throw new UsageError('--venue is required');
  const source = findArchiveSource(values.venue);
  if (!source) throw new UsageError(`unknown venue ${JSON.stringify(values.venue)}: one of ${archiveSources.map((s) => s.venue).join(', ')}`);
  const day = /^\d{4}-\d{2}-\d{2}$/;
  for (const name of ['from', 'to'] as const) if (values[name] !== undefined && !(day.test(values[name]) && !Number.isNaN(Date.parse(values[name])))) throw new UsageError(`--${name} must be a day, YYYY-MM-DD`);
  if (positionals.length > 0 && (values.from || values.to)) throw new UsageError('give files, or --from and --to to download: not both');
  if (positionals.length === 0 && !(values.from && values.to && values.market)) throw new UsageError('give files to import, or --market, --from and --to to download');
  if (values.from && values.to && values.from > values.to) throw new UsageError('--from is after --to');
  return { source, kind: values.kind, markets: values.market?.split(',').map((m) => m.trim()).filter(Boolean), from: values.from, to: values.to, dir: values.dir ?? 'archives', force: values.force === true, files: positionals };
}

/** The format of a kind, or the error that names the kind to use. */
function formatOf(source: ArchiveSource, kind: string): ArchiveFormat {
  const format = source.kinds[kind];
  if (!format) throw new UsageError(`unknown kind ${JSON.stringify(kind)} for ${source.venue}: ${kindsLine(source)}`);
  if (isRefusedKind(format)) throw new CliError(`refused: ${format.refused}`);
  return format;
}

/** Files given on the command line, each named as the venue names it. */
function fileJobs(args: Args): FileJob[] {
  const { source } = args;
  return args.files.map((file) => {
    const path = resolve(file);
    if (!existsSync(path) || !statSync(path).isFile()) throw new CliError(`no such file: ${file}`);
    const name = basename(path);
    const named = source.parseName(name);
    if (!named) throw new CliError(`${name}: not named as ${source.venue} names its archive files (e.g. ${basename(source.path('BTCUSDT', Object.keys(source.kinds)[0]!, { daily: '2024-01-01' }))})`);
    if (args.kind && args.kind !== named.kind) throw new UsageError(`${name} is a ${named.kind} file, not ${args.kind}`);
    const markets = named.market ? undefined : new Set(args.markets ?? ['XBTUSD']);
    return { path, name, source, format: formatOf(source, named.kind), market: named.market, period: named.period, ...(markets ? { markets } : {}) };
  });
}

/** Downloads the files of --market from --from to --to; a file that fails is said and left out. */
async function downloadJobs(args: Args, progress: ProgressReporter): Promise<{ jobs: FileJob[]; failed: string[] }> {
  const { source } = args;
  const kind = args.kind ?? Object.keys(source.kinds)[0]!;
  const format = formatOf(source, kind);
  const base = archiveBaseUrl(source);
  const dir = resolve(args.dir, source.venue);
  const jobs: FileJob[] = [];
  const failed: string[] = [];
  const periods = plannedPeriods(source, args.from!, args.to!);
  // One file of every market per period where the venue writes them so (BitMEX).
  const perMarket = source.parseName(basename(source.path('X', kind, periods[0]!)))?.market !== undefined;
  const markets = perMarket ? args.markets! : [args.markets![0]!];
  for (const market of markets) {
    for (const period of periods) {
      const url = `${base}${source.path(market, kind, period)}`;
      try {
        const got = await downloadFile(source, url, dir);
        progress.say(`${got.cached ? 'have' : 'downloaded'} ${basename(got.path)}${got.verified ? ' (sha256 verified)' : source.checksums ? '' : ' (the venue publishes no checksum)'}`);
        jobs.push(jobFor(source, format, got.path, period, perMarket ? market : undefined, perMarket ? undefined : new Set(args.markets)));
      } catch (err) {
        failed.push(`${url}: ${(err as Error).message}`);
        progress.say(`failed ${url}: ${(err as Error).message}`);
      }
    }
  }
  return { jobs, failed };
}

const jobFor = (source: ArchiveSource, format: ArchiveFormat, path: string, period: Period, market: string | undefined, markets: Set<string> | undefined): FileJob => ({
  path,
  name: basename(path),
  source,
  format,
  period,
  ...(market ? { market } : {}),
  ...(markets ? { markets } : {}),
});

/** The live process holding the embedded store, from the status file chDB keeps while it is open. */
function embeddedStoreHolder(dataDir: string): number | undefined {
  try {
    const pid = Number(/^PID: (\d+)$/m.exec(readFileSync(join(resolve(dataDir), 'status'), 'utf8'))?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? -1 : undefined;
  }
}

/** The running node's store through its channel, else the store itself. */
async function openTarget(config: Config): Promise<ImportTarget> {
  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, { role: 'import' });
  if (config.CLICKHOUSE_URL === undefined) {
    const path = storeSocketPath(config.MDS_DATA_DIR);
    const client = storeChannelClient(path);
    try {
      await client.rows('SELECT 1 AS ok');
      return channelTarget(client, `the node holding ${resolve(config.MDS_DATA_DIR)} (through ${path})`);
    } catch (err) {
      if (!(err instanceof StoreChannelAbsentError)) throw new CliError(`the store channel at ${path} failed: ${(err as Error).message}`);
    }
    const holder = embeddedStoreHolder(config.MDS_DATA_DIR);
    if (holder !== undefined) throw new CliError(`the embedded store in ${resolve(config.MDS_DATA_DIR)} is in use by process ${holder} and no store channel answers at ${path} (the service is starting or stopping): retry, or stop it first`);
  }
  try {
    return await openDirectTarget(config, log);
  } catch (err) {
    if (err instanceof StoreInUseError) throw new CliError(`${err.message}, and no store channel answers: retry once the service is up, or stop it first`);
    throw new CliError(`the store is unreachable (${config.CLICKHOUSE_URL === undefined ? `embedded in ${resolve(config.MDS_DATA_DIR)}` : 'CLICKHOUSE_URL'}): ${redactCredentials((err as Error).message)}`);
  }
}

async function checkMigrated(target: ImportTarget): Promise<void> {
  const [row] = await target.rows<{ n: number }>("SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'import_files'");
  if (!row?.n) throw new CliError('the store has no import_files table: run `npm run migrate` first');
}

async function main(argv: string[]): Promise<number> {
  const args = parse(argv);
  const config = loadConfig();
  const progress = new ProgressReporter(process.stderr);
  const given = args.files.length > 0 ? fileJobs(args) : undefined;
  // A refused or unknown kind is said before anything is opened or fetched.
  if (!given) formatOf(args.source, args.kind ?? Object.keys(args.source.kinds)[0]!);
  const target = await openTarget(config);
  try {
    await checkMigrated(target);
    const downloaded = given ? { jobs: given, failed: [] } : await downloadJobs(args, progress);
    const contracts: ContractSizes | undefined = args.source.contracts ? await loadContractSizes(args.source.venue).catch((err: Error) => {
      throw new CliError(`${args.source.venue} quantities are contracts, and its instrument list (for their size) could not be read: ${err.message}`);
    }) : undefined;
    const summary = await importFiles(downloaded.jobs, { target, now: Date.now(), force: args.force, contracts, discover: config.INGEST_DISCOVER, onProgress: (f, rows) => progress.update(f, rows) }, {
      onFileStart: (job, position, of) => progress.fileStarted(job.name, position, of),
      onFileDone: (outcome) => progress.say(fileLine(outcome)),
      onIndexStart: (span) => progress.say(`computing the index history from ${new Date(span.from).toISOString()} ...`),
    });
    for (const line of summaryLines(summary, target.description)) process.stdout.write(`${line}\n`);
    for (const line of downloaded.failed) process.stdout.write(`FAILED download ${line}\n`);
    return summary.failed.length + downloaded.failed.length > 0 ? 1 : 0;
  } finally {
    await target.close();
  }
}

answerHelpAndVersion(process.argv.slice(2), usage);
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${usage}`);
      process.exit(2);
    }
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    console.error(err instanceof CliError ? err.message : redactCredentials(err instanceof Error ? (err.stack ?? err.message) : String(err)));
    process.exit(1);
  },
);

import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { Job } from '../../infra/jobs.ts';
import type { Logger } from '../../infra/log.ts';
import { etfAssetId, etfFundsOf, isoDate, type EtfAssetId } from '../../infra/reference/etfFunds.ts';
import type { Store } from '../../infra/store.ts';

// The file format is documented in aggregate/METHODOLOGY.md, "ETF flows".

const etfFlowsHeader = 'date,fund,flow_usd';
/** The SIMULATED flow files `npm run demo` imports when ETF_FLOWS_DIR is unset. */
export const etfFlowsDemoDir = fileURLToPath(new URL('../../infra/reference/etf-flows-demo/', import.meta.url));
/** A decade of twenty funds is ~2 MB: anything far larger is not a flow file, and is not read into memory. */
const maxFileBytes = 16 * 1024 * 1024;
const issuesShown = 20;

export interface EtfFlowRow {
  date: string;
  fund: string;
  flowUsd: number;
}

export interface EtfFlowsFile {
  asset: EtfAssetId;
  /** From the `# source:` line; the file name when there is none. */
  source: string;
  /** From the `# simulated:` line; false when there is none. */
  simulated: boolean;
  /** Sorted by date, then fund. */
  rows: EtfFlowRow[];
}

export interface EtfFlowsIssue {
  /** 1-based line of the file; 0 for the file as a whole. */
  line: number;
  field: 'file' | 'header' | 'row' | 'source' | 'simulated' | 'date' | 'fund' | 'flow_usd';
  message: string;
}

/** A flow file that cannot be loaded; nothing of it is. The message lists `file:line: field: problem`. */
export class EtfFlowsFileError extends Error {
  override name = 'EtfFlowsFileError';
  readonly file: string;
  readonly issues: readonly EtfFlowsIssue[];
  constructor(file: string, issues: readonly EtfFlowsIssue[]) {
    const shown = issues.slice(0, issuesShown).map((i) => `  ${file}:${i.line}: ${i.field}: ${i.message}`);
    if (issues.length > issuesShown) shown.push(`  ... and ${issues.length - issuesShown} more`);
    super(`${file} was not imported:\n${shown.join('\n')}`);
    this.file = file;
    this.issues = issues;
  }
}

/** The UTC calendar day of a unix ms time, YYYY-MM-DD. */
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const weekday = (date: string): boolean => {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day !== 0 && day !== 6;
};

/** The asset a file holds, from its name: btc.csv, eth.csv, sol.csv. */
function assetOfFile(path: string): EtfAssetId | undefined {
  const match = /^([a-z]+)\.csv$/.exec(basename(path));
  const parsed = etfAssetId.safeParse(match?.[1]);
  return parsed.success ? parsed.data : undefined;
}

function rowSchema(asset: EtfAssetId, today: string) {
  const tickers = etfFundsOf(asset).map((f) => f.ticker);
  return z.object({
    date: isoDate
      // Trading days only: a weekend row is a shifted date, however the file was produced.
      .refine(weekday, 'is a Saturday or a Sunday; US funds report trading days only')
      .refine((d) => d <= today, `is after today (${today} UTC)`),
    fund: z.string().refine((t) => tickers.includes(t), `is not a ${asset} fund of infra/reference/etf-funds.json (${tickers.join(', ')})`),
    flow_usd: z
      .string()
      .regex(
        /^-?\d+(\.\d+)?$/,
        'must be a plain number of US dollars such as -95100000 or 1250000.5 (no thousands separators, parentheses, currency sign or exponent); a fund that reported nothing that day gets no row',
      )
      .transform(Number),
  });
}

/**
 * Parses and validates one asset's flow file. Collects every problem (with its line and
 * field) instead of stopping at the first, so one pass over a bad file shows all that is wrong.
 */
export function parseEtfFlows(text: string, options: { file: string; asset: EtfAssetId; today: string }): EtfFlowsFile {
  const { file, asset, today } = options;
  const schema = rowSchema(asset, today);
  const launchOf = new Map(etfFundsOf(asset).map((f) => [f.ticker, f.launchDate]));
  const issues: EtfFlowsIssue[] = [];
  let source = basename(file);
  let simulated = false;
  let headerSeen = false;
  const rows: EtfFlowRow[] = [];
  const lineOf = new Map<string, number>();

  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = i + 1;
    const content = raw.trim();
    if (content === '') continue;
    if (content.startsWith('#')) {
      const meta = /^#\s*(source|simulated)\s*:\s*(.*)$/i.exec(content);
      if (!meta) continue;
      if (headerSeen) {
        issues.push({ line, field: meta[1]!.toLowerCase() as EtfFlowsIssue['field'], message: 'must come before the header line' });
      } else if (meta[1]!.toLowerCase() === 'source') {
        if (meta[2]) source = meta[2];
        else issues.push({ line, field: 'source', message: 'is empty' });
      } else if (meta[2] === 'true' || meta[2] === 'false') {
        simulated = meta[2] === 'true';
      } else {
        issues.push({ line, field: 'simulated', message: `must be true or false, not ${JSON.stringify(meta[2])}` });
      }
      continue;
    }
    if (!headerSeen) {
      if (content.replace(/\s/g, '').toLowerCase() !== etfFlowsHeader) {
        issues.push({ line, field: 'header', message: `must be "${etfFlowsHeader}", found ${JSON.stringify(content)}` });
        break;
      }
      headerSeen = true;
      continue;
    }
    const fields = content.split(',').map((f) => f.trim());
    if (fields.length !== 3) {
      issues.push({ line, field: 'row', message: `must have 3 fields (${etfFlowsHeader}), found ${fields.length}` });
      continue;
    }
    const parsed = schema.safeParse({ date: fields[0], fund: fields[1], flow_usd: fields[2] });
    if (!parsed.success) {
      // One message per field: the first is the one to fix.
      const fieldsSeen = new Set<string>();
      for (const issue of parsed.error.issues) {
        const field = String(issue.path[0]) as EtfFlowsIssue['field'];
        if (fieldsSeen.has(field)) continue;
        fieldsSeen.add(field);
        issues.push({ line, field, message: `${JSON.stringify(fields[['date', 'fund', 'flow_usd'].indexOf(field)])} ${issue.message}` });
      }
      continue;
    }
    const { date, fund, flow_usd: flowUsd } = parsed.data;
    const launch = launchOf.get(fund)!;
    if (date < launch) {
      issues.push({
        line,
        field: 'date',
        message: `${date} is before ${fund}'s first trading day ${launch}; fix the row, or the launch date in infra/reference/etf-funds.json`,
      });
      continue;
    }
    const key = `${date} ${fund}`;
    const earlier = lineOf.get(key);
    if (earlier !== undefined) {
      issues.push({ line, field: 'row', message: `repeats ${fund} on ${date} from line ${earlier}: one row per date and fund` });
      continue;
    }
    lineOf.set(key, line);
    rows.push({ date, fund, flowUsd });
  }

  if (!headerSeen && issues.length === 0) issues.push({ line: 0, field: 'header', message: `no header line "${etfFlowsHeader}"` });
  // Refused rather than read as "delete every flow of the asset", which a truncated file would otherwise do.
  if (headerSeen && issues.length === 0 && rows.length === 0) issues.push({ line: 0, field: 'file', message: 'has no data rows' });
  if (issues.length > 0) throw new EtfFlowsFileError(file, issues);
  rows.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.fund < b.fund ? -1 : a.fund > b.fund ? 1 : 0));
  return { asset, source, simulated, rows };
}

export interface EtfFlowsImport {
  file: string;
  asset: EtfAssetId;
  /** Rows in the file. */
  rows: number;
  /** Rows new or changed in the store. */
  written: number;
  /** Rows the store held that the file no longer has (now tombstoned). */
  deleted: number;
}

interface StoredFlow {
  date: string;
  fund: string;
  flow_usd: number;
  source: string;
  simulated: boolean;
}

const storedFlowsSql = `
SELECT toString(date) AS date, fund, flow_usd, source, simulated
FROM etf_flows FINAL
WHERE asset = {asset:String}`;

type EtfFlowWrite = Record<string, string | number | boolean>;

/**
 * What importing `file` writes so that the store's flows of its asset equal the file: the
 * rows that are new or changed (version = now), and a tombstone for each stored row the file no
 * longer has. An unchanged file writes nothing, which makes every import idempotent.
 */
async function planImport(store: Store, file: string, now: number): Promise<{ result: EtfFlowsImport; writes: EtfFlowWrite[] }> {
  const asset = assetOfFile(file);
  if (!asset) throw new EtfFlowsFileError(file, [{ line: 0, field: 'file', message: `the name must be the asset: ${etfAssetId.options.map((a) => `${a}.csv`).join(', ')}` }]);
  const { size } = await stat(file);
  if (size > maxFileBytes) throw new EtfFlowsFileError(file, [{ line: 0, field: 'file', message: `is ${size} bytes; at most ${maxFileBytes} are read` }]);
  const parsed = parseEtfFlows(await readFile(file, 'utf8'), { file, asset, today: utcDay(now) });

  const stored = new Map((await store.rows<StoredFlow>(storedFlowsSql, { asset })).map((r) => [`${r.date} ${r.fund}`, r]));
  const row = (date: string, fund: string, flowUsd: number, isDeleted: 0 | 1): EtfFlowWrite => ({
    asset,
    date,
    fund,
    flow_usd: flowUsd,
    source: parsed.source,
    simulated: parsed.simulated,
    imported_at: now,
    is_deleted: isDeleted,
  });
  const writes: EtfFlowWrite[] = [];
  for (const r of parsed.rows) {
    const key = `${r.date} ${r.fund}`;
    const before = stored.get(key);
    stored.delete(key);
    if (before && before.flow_usd === r.flowUsd && before.source === parsed.source && before.simulated === parsed.simulated) continue;
    writes.push(row(r.date, r.fund, r.flowUsd, 0));
  }
  const written = writes.length;
  for (const gone of stored.values()) writes.push(row(gone.date, gone.fund, 0, 1));
  return { result: { file, asset, rows: parsed.rows.length, written, deleted: stored.size }, writes };
}

/** Imports one file in one insert (see planImport); a file with any problem writes nothing. */
export async function importEtfFlowsFile(store: Store, file: string, now = Date.now()): Promise<EtfFlowsImport> {
  const { result, writes } = await planImport(store, file, now);
  await store.insert('etf_flows', writes);
  return result;
}

/**
 * Imports every `*.csv` of `dir`. Each file is checked on its own: a bad one is logged with its
 * lines and the others still load. The good files go in ONE insert, so a reader (and the API's
 * hour-long response cache) sees the state before the run or after it, never half of it. Throws
 * afterwards when any file failed, so the job runner records the failure and retries.
 */
export async function importEtfFlowsDir(
  store: Store,
  dir: string,
  options: { log: Logger; signal?: AbortSignal; now?: number },
): Promise<EtfFlowsImport[]> {
  const { log, signal } = options;
  const now = options.now ?? Date.now();
  const files = (await readdir(dir)).filter((f) => f.toLowerCase().endsWith('.csv')).sort();
  if (files.length === 0) log.warn({ dir }, 'no ETF flow files (*.csv) in the directory');
  const planned: Awaited<ReturnType<typeof planImport>>[] = [];
  const failed: string[] = [];
  for (const name of files) {
    if (signal?.aborted) return [];
    try {
      planned.push(await planImport(store, join(dir, name), now));
    } catch (err) {
      log.error({ err, file: join(dir, name) }, 'ETF flow file not imported');
      failed.push(err instanceof Error ? err.message : String(err));
    }
  }
  await store.insert('etf_flows', planned.flatMap((p) => p.writes));
  for (const { result } of planned) log.info(result, 'ETF flows imported');
  if (failed.length > 0) throw new Error(`${failed.length} of ${files.length} ETF flow files failed:\n${failed.join('\n')}`);
  return planned.map((p) => p.result);
}

/** Imports the flow files of `dir` every hour (ETF_FLOWS_DIR). */
export function etfFlowsJob(dir: string): Job {
  return {
    name: 'etf-flows',
    everyMs: 60 * 60_000,
    async run({ store, log, signal }) {
      await importEtfFlowsDir(store, dir, { log, signal });
    },
  };
}

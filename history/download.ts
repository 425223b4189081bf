// Downloading a venue's archive files for a market and a span of days: the monthly file where the
// venue publishes one and the whole month is asked, daily files otherwise; each verified against
// its published `.CHECKSUM` (sha256sum line) where the venue publishes one. The host is the
// venue's (archives/*.ts), or VENUE_<ID>_ARCHIVE_URL (tests serve fixture files on loopback).
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import { fileSha256 } from './archiveFile.ts';
import type { ArchiveSource, Period } from './archives/source.ts';

/** The file's bytes are not those its `.CHECKSUM` names: it is refused (and removed). */
export class ChecksumMismatchError extends Error {
  override name = 'ChecksumMismatchError';
}

/** The venue has no such file (HTTP 404): not published yet, or no trading that day. */
export class NotPublishedError extends Error {
  override name = 'NotPublishedError';
}

/** `VENUE_BINANCE_FUTURES_ARCHIVE_URL`: overrides the download host of a venue's archive. */
export const archiveUrlVariable = (venue: string) => `VENUE_${venue.toUpperCase().replace(/-/g, '_')}_ARCHIVE_URL`;

export function archiveBaseUrl(source: ArchiveSource, env: NodeJS.ProcessEnv = process.env): string {
  return (env[archiveUrlVariable(source.venue)]?.trim() || source.baseUrl).replace(/\/$/, '');
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The files that hold `from`..`to` (inclusive days, `YYYY-MM-DD`): a whole month as its monthly
 * file where the venue publishes those, every other day as its daily file (months only, for
 * venues without daily files).
 */
export function plannedPeriods(source: ArchiveSource, from: string, to: string): Period[] {
  const periods: Period[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  let at = Date.parse(`${from}T00:00:00Z`);
  while (at <= end) {
    const date = new Date(at);
    const monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    const nextMonth = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    const wholeMonth = at === monthStart && nextMonth - 86_400_000 <= end;
    if (source.periods.monthly && (wholeMonth || !source.periods.daily)) {
      periods.push({ monthly: day(at).slice(0, 7) });
      at = nextMonth;
    } else {
      periods.push({ daily: day(at) });
      at += 86_400_000;
    }
  }
  return periods;
}

/** The sha256 a `.CHECKSUM` file states (`<64 hex>  <file name>`, with or without a final newline). */
export function checksumOf(text: string): string | undefined {
  return /^([0-9a-f]{64})\s/i.exec(text.trim() + ' ')?.[1]?.toLowerCase();
}

async function get(url: string): Promise<Response> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30 * 60_000) });
  if (res.status === 404) throw new NotPublishedError(`${url}: not published (HTTP 404)`);
  if (!res.ok || !res.body) throw new Error(`${url}: HTTP ${res.status}`);
  return res;
}

export interface Downloaded {
  path: string;
  /** Whether a published checksum was verified (false: the venue publishes none). */
  verified: boolean;
  /** Already in the download directory with a matching checksum: not fetched again. */
  cached: boolean;
}

/** Fetches one file into `dir` (kept there), verified against its `.CHECKSUM` where the venue publishes one. */
export async function downloadFile(source: ArchiveSource, url: string, dir: string): Promise<Downloaded> {
  mkdirSync(dir, { recursive: true });
  const name = url.split('/').at(-1)!;
  const path = join(dir, name);
  const expected = source.checksums ? checksumOf(await (await get(`${url}.CHECKSUM`)).text()) : undefined;
  if (source.checksums && !expected) throw new Error(`${url}.CHECKSUM: no sha256 in it`);
  if (expected && existsSync(path) && (await fileSha256(path)) === expected) return { path, verified: true, cached: true };
  const partial = `${path}.part`;
  const res = await get(url);
  await pipeline(Readable.fromWeb(res.body as ReadableStream<Uint8Array>), createWriteStream(partial));
  if (expected) {
    const actual = await fileSha256(partial);
    if (actual !== expected) {
      rmSync(partial, { force: true });
      throw new ChecksumMismatchError(`${name}: sha256 ${actual} but its .CHECKSUM says ${expected}: refused`);
    }
  }
  renameSync(partial, path);
  return { path, verified: expected !== undefined, cached: false };
}

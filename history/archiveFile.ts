// Reading one archive file as published: a `.zip` (Binance, OKX, KuCoin; its one CSV, skipping
// macOS resource forks, which Binance's own update lists carry), a `.csv.gz` (Bybit, BitMEX, Gate)
// or the plain `.csv` inside either. Lines come in batches: one await per line would cost more
// than the parsing.
import { createHash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import yauzl from 'yauzl';

/** The file is not an archive we can read (no CSV in the zip, a broken gzip stream...). */
export class ArchiveFileError extends Error {
  override name = 'ArchiveFileError';
}

/** sha256 of the file's bytes, hex. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A file's text, and how far through the file a reader is (0..1) once it has read `textBytes` of it. */
interface TextStream {
  stream: Readable;
  fraction(textBytes: number): number;
}

/** The CSV inside a zip: the one entry ending in .csv that is not a resource fork (`__MACOSX/`). */
async function zipEntryStream(path: string): Promise<TextStream> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true });
  const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
    zip.on('entry', (e: yauzl.Entry) => (/\.csv$/i.test(e.fileName) && !e.fileName.startsWith('__MACOSX/') ? resolve(e) : zip.readEntry()));
    zip.on('end', () => resolve(undefined));
    zip.on('error', reject);
    zip.readEntry();
  });
  if (!entry) {
    zip.close();
    throw new ArchiveFileError(`${basename(path)}: no .csv inside the zip`);
  }
  const stream = await zip.openReadStreamPromise(entry);
  stream.on('end', () => zip.close());
  return { stream, fraction: (textBytes) => (entry.uncompressedSize > 0 ? textBytes / entry.uncompressedSize : 0) };
}

/** The file's text as a stream: unzipped or gunzipped by its name. */
async function textStream(path: string): Promise<TextStream> {
  if (/\.zip$/i.test(path)) return zipEntryStream(path);
  const size = statSync(path).size;
  const raw = createReadStream(path);
  return { stream: /\.gz$/i.test(path) ? raw.pipe(createGunzip()) : raw, fraction: () => (size > 0 ? raw.bytesRead / size : 1) };
}

/** Lines of a file, and how far through it they reach (0..1). */
export interface LineBatch {
  lines: string[];
  fraction: number;
}

/** The file's lines, in batches, without line breaks (`\r\n` too); the last line may lack its break. */
export async function* lineBatches(path: string): AsyncGenerator<LineBatch> {
  let text: TextStream;
  try {
    text = await textStream(path);
  } catch (err) {
    if (err instanceof ArchiveFileError) throw err;
    throw new ArchiveFileError(`${basename(path)}: ${(err as Error).message}`, { cause: err });
  }
  const { stream, fraction } = text;
  // Archives are ASCII: characters are bytes.
  stream.setEncoding('latin1');
  let rest = '';
  let read = 0;
  try {
    for await (const chunk of stream) {
      read += (chunk as string).length;
      const lines = (rest + (chunk as string)).split('\n');
      rest = lines.pop()!;
      for (let i = 0; i < lines.length; i++) if (lines[i]!.endsWith('\r')) lines[i] = lines[i]!.slice(0, -1);
      yield { lines, fraction: fraction(read) };
    }
  } catch (err) {
    throw new ArchiveFileError(`${basename(path)}: ${(err as Error).message}`, { cause: err });
  }
  if (rest.endsWith('\r')) rest = rest.slice(0, -1);
  if (rest !== '') yield { lines: [rest], fraction: 1 };
}

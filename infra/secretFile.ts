import { randomBytes } from 'node:crypto';
import { linkSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a generated secret into `file` (owner-only) unless the file exists: written whole under a
 * name of its own, then linked into place (link never replaces a file), so that of two processes
 * starting together one links first and the other reads that complete file.
 */
export function writeSecretFileOnce(file: string, content: string): void {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}`);
  writeFileSync(temp, content, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(temp, { force: true });
  }
}

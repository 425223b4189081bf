import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../config.ts';
import { writeSecretFileOnce } from '../secretFile.ts';

/** Name of the generated reader password's file in MDS_DATA_DIR (SQL_PASSWORD unset). */
export const sqlPasswordFileName = 'sql-password';

/** The reader's password and where it came from: SQL_PASSWORD, or the file it was generated into. */
export interface ReaderPassword {
  password: string;
  /** The file that keeps a generated password; undefined when SQL_PASSWORD gave it. */
  file?: string;
}

/**
 * SQL_PASSWORD when set; otherwise one generated on first use and kept in
 * `<MDS_DATA_DIR>/sql-password` (owner-only), so restarts keep it.
 */
export function loadReaderPassword(config: { SQL_PASSWORD?: string; MDS_DATA_DIR: string }): ReaderPassword {
  if (config.SQL_PASSWORD !== undefined) return { password: config.SQL_PASSWORD };
  const dir = resolve(config.MDS_DATA_DIR);
  const file = join(dir, sqlPasswordFileName);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const kept = readKept(file);
  if (kept !== undefined) return { password: kept, file };
  writeSecretFileOnce(file, `${randomBytes(18).toString('base64url')}\n`);
  return { password: readKept(file)!, file };
}

function readKept(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (text.length < 16) throw new ConfigError(`${file} holds no usable SQL reader password (${text.length} characters, 16 at least); delete it to have a new one made`);
  return text;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * A check of the reader's credentials that keeps only a digest of the password and compares
 * digests in constant time (equal lengths, so no length leaks either).
 */
export function credentialCheck(user: string, password: string): (givenUser: string, givenPassword: string) => boolean {
  const expected = digest(`${user}\0${password}`);
  return (givenUser, givenPassword) => timingSafeEqual(digest(`${givenUser}\0${givenPassword}`), expected);
}

// The operator's identity decisions (CATALOG.md, "Discovered assets"): which venue tickers are an
// asset we already know (a catalog asset, or another venue's discovered one), at what scale, and
// which colliding tickers were looked at and are different assets. Read once when a role starts,
// like the catalog: from MDS_IDENTITIES_FILE, or <MDS_DATA_DIR>/identities.json when it exists.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { assetIdForVenueTicker, CatalogError, findAsset, findVenue } from './catalog.ts';
import { discoveredAssetId, parseDiscoveredId } from './discovered.ts';

const venueTicker = { venue: z.string().min(1), ticker: z.string().min(1) };

/** `ticker` as `venue` lists it is `asset`; one listed unit is `scale` units of it (1000PEPE: 1000 PEPE). */
const identityMappingEntry = z.strictObject({
  ...venueTicker,
  asset: z.string().min(1),
  scale: z.number().int().positive().default(1),
  /** Why: what the operator checked (the report's verdict, a contract address, the venue's announcement). */
  note: z.string().default(''),
});
export type IdentityMapping = z.infer<typeof identityMappingEntry>;

/** `ticker` as `venue` lists it was looked at and is its own asset: no longer listed as ambiguous. */
const identityApart = z.strictObject({ ...venueTicker, note: z.string().default('') });

const identitiesFile = z.strictObject({ map: z.array(identityMappingEntry).default([]), apart: z.array(identityApart).default([]) });

export interface Identities {
  /** The file read, or undefined when there is none. */
  file: string | undefined;
  mappings: readonly IdentityMapping[];
  apart: readonly z.infer<typeof identityApart>[];
}

const key = (venue: string, ticker: string) => `${venue}\n${ticker}`;

/** Checks what the schema cannot: known venues, assets that exist, no ticker decided twice, no chain of joins. */
function checkIdentities(file: string, parsed: z.infer<typeof identitiesFile>): void {
  const seen = new Set<string>();
  const fail = (where: string, message: string) => {
    throw new CatalogError(`${file}: ${where}: ${message}`);
  };
  const entries = [...parsed.map.map((m, i) => ({ where: `map[${i}]`, ...m })), ...parsed.apart.map((a, i) => ({ where: `apart[${i}]`, ...a }))];
  for (const e of entries) {
    if (!findVenue(e.venue)) fail(e.where, `venue ${JSON.stringify(e.venue)} is not a venue we collect from`);
    if (seen.has(key(e.venue, e.ticker))) fail(e.where, `${e.venue} ${e.ticker} is decided twice`);
    const catalogued = assetIdForVenueTicker(e.venue, e.ticker);
    if (catalogued) fail(e.where, `the catalog already maps ${e.venue} ${e.ticker} to ${catalogued} (infra/catalog/venue-assets.json)`);
    seen.add(key(e.venue, e.ticker));
  }
  // The discovered ids this file joins into something else: none may be a target (a chain of joins).
  const joinedIds = new Set(parsed.map.map((m) => discoveredAssetId(m.venue, m.ticker)));
  parsed.map.forEach((m, i) => {
    const origin = parseDiscoveredId(m.asset);
    if (!findAsset(m.asset) && !(origin && findVenue(origin.venue))) fail(`map[${i}]`, `asset ${JSON.stringify(m.asset)} is neither a catalog id nor a discovered id (ticker--venue)`);
    if (joinedIds.has(m.asset)) fail(`map[${i}]`, `asset ${JSON.stringify(m.asset)} is itself mapped to another asset in this file: map to that one`);
  });
}

/** Reads and checks an identities file; errors name the file and the entry. */
export function loadIdentities(file: string | undefined): Identities {
  if (file === undefined) return { file, mappings: [], apart: [] };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CatalogError(`${file}: cannot read as JSON (${(err as Error).message})`);
  }
  const result = identitiesFile.safeParse(json);
  if (!result.success) {
    const lines = result.error.issues.slice(0, 10).map((issue) => `  ${issue.path.join('.') || '(file)'}: ${issue.message}`);
    throw new CatalogError(`${file}: invalid identities file\n${lines.join('\n')}`);
  }
  checkIdentities(file, result.data);
  return { file, mappings: result.data.map, apart: result.data.apart };
}

/** The identities file a role reads: MDS_IDENTITIES_FILE, else <MDS_DATA_DIR>/identities.json when it exists. */
export function identitiesPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.MDS_IDENTITIES_FILE) return resolve(env.MDS_IDENTITIES_FILE);
  const inDataDir = join(env.MDS_DATA_DIR || './data', 'identities.json');
  return existsSync(inDataDir) ? resolve(inDataDir) : undefined;
}

// Read at import, as the catalog: every module sees the same decisions.
export const identities: Identities = loadIdentities(identitiesPath());

const mappingByTicker = new Map(identities.mappings.map((m) => [key(m.venue, m.ticker), m]));
const apartByTicker = new Set(identities.apart.map((a) => key(a.venue, a.ticker)));

/** The operator's mapping of a venue ticker, if any. */
export function identityMapping(venue: string, ticker: string): IdentityMapping | undefined {
  return mappingByTicker.get(key(venue, ticker));
}

/** Whether the operator decided this venue ticker is its own asset. */
export function decidedApart(venue: string, ticker: string): boolean {
  return apartByTicker.has(key(venue, ticker));
}

// Regenerates infra/catalog/ccxt-venues.json and ccxt-venue-assets.json from the installed ccxt and
// the native registry: `node ingest/venues/writeCcxtCatalog.ts` (prints what it leaves out and why).
// Run it after upgrading ccxt or adding a native venue; a test fails while the files are stale.
import { writeFileSync } from 'node:fs';
import venueAssetsJson from '../../infra/catalog/venue-assets.json' with { type: 'json' };
import { deriveCcxtCatalog, type CcxtDescription, type DerivedCcxtCatalog } from './ccxtVenues.ts';
import { nativeVenues } from './registry.ts';

const venuesFile = new URL('../../infra/catalog/ccxt-venues.json', import.meta.url);
const assetsFile = new URL('../../infra/catalog/ccxt-venue-assets.json', import.meta.url);

/** Every ccxt.pro exchange's description (ccxt is imported here only: it takes about a second to load). */
export async function ccxtDescriptions(): Promise<CcxtDescription[]> {
  const { pro } = await import('ccxt');
  return Object.values(pro as unknown as Record<string, unknown>)
    .filter((c): c is new () => CcxtDescription => typeof c === 'function')
    .map((Exchange) => new Exchange());
}

/** The tickers every native venue maps to the same asset (today they all share one table). */
export function sharedTickerTable(tables: Readonly<Record<string, Readonly<Record<string, string>>>>, venueIds: readonly string[]): Record<string, string> {
  const [head, ...rest] = venueIds.map((id) => tables[id] ?? {});
  return Object.fromEntries(Object.entries(head ?? {}).filter(([ticker, asset]) => rest.every((t) => t[ticker] === asset)));
}

/** The two files' text, as they should read for the installed ccxt and the current native venues. */
export async function ccxtCatalogFiles(): Promise<{ venues: string; assets: string; derived: DerivedCcxtCatalog }> {
  const nativeIds = nativeVenues.map((v) => v.id);
  const derived = deriveCcxtCatalog(await ccxtDescriptions(), new Set(nativeIds));
  const tickers = sharedTickerTable(venueAssetsJson, nativeIds.filter((id) => id in venueAssetsJson));
  // One venue per line: diffs stay readable when ccxt adds or drops an exchange.
  const venues = `[\n${derived.venues.map((v) => ` ${JSON.stringify(v)}`).join(',\n')}\n]\n`;
  const assets = `${JSON.stringify({ tickers }, null, 1)}\n`;
  return { venues, assets, derived };
}

if (import.meta.main) {
  const { venues, assets, derived } = await ccxtCatalogFiles();
  writeFileSync(venuesFile, venues);
  writeFileSync(assetsFile, assets);
  for (const l of derived.left) console.log(`left out: ${l.ccxt}${l.contract ? ` (${l.contract})` : ''}: ${l.reason}`);
  console.log(`${derived.venues.length} ccxt venues written to infra/catalog/ccxt-venues.json`);
}

// Every native venue has every item of ingest/venues/ADDING_A_VENUE.md. A venue file that is not
// registered yet counts too, so a new venue's author sees, item by item, what it still lacks. No
// socket and no store: files, their names and what they declare.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { expect, test } from 'vitest';
import { findVenue } from '../../infra/catalog/catalog.ts';
import venueAssets from '../../infra/catalog/venue-assets.json' with { type: 'json' };
import { simulatedVenueIds } from '../../simulator/simulator.ts';
import { loadVenueFormats } from '../../test/loadgen/venues/index.ts';
import type { VenueDescriptor } from '../venue.ts';
import { ccxtPolicies } from '../venues/ccxtVenues.ts';
import { nativeVenues } from '../venues/registry.ts';

const root = new URL('../../', import.meta.url);
const exists = (path: string) => existsSync(new URL(path, root));
const read = (path: string) => (exists(path) ? readFileSync(new URL(path, root), 'utf8') : undefined);

/** A venue to check: its descriptor, and the file (without `.ts`) and export name it comes from, when one of ingest/venues/ exports it. */
interface Candidate {
  venue: VenueDescriptor;
  file?: string;
  exportName?: string;
}

/** The files of ingest/venues/ that are wiring, not venues. */
const wiring = new Set(['registry.ts', 'ccxtVenues.ts', 'writeCcxtCatalog.ts']);
const isDescriptor = (v: unknown): v is VenueDescriptor => typeof v === 'object' && v !== null && 'id' in v && 'parse' in v && 'sockets' in v;

/** Every descriptor a venue file exports, and every registered one (a registered venue no file exports has no file). */
async function candidates(): Promise<Candidate[]> {
  const found = new Map<VenueDescriptor, Candidate>();
  const files = readdirSync(new URL('ingest/venues/', root)).filter((name) => name.endsWith('.ts') && !wiring.has(name));
  for (const name of files.sort()) {
    const file = name.slice(0, -'.ts'.length);
    const exported = (await import(`../venues/${file}.ts`)) as Record<string, unknown>;
    for (const [exportName, value] of Object.entries(exported)) if (isDescriptor(value) && !found.has(value)) found.set(value, { venue: value, file, exportName });
  }
  for (const venue of nativeVenues) if (!found.has(venue)) found.set(venue, { venue });
  return [...found.values()];
}

/** `binance-futures` -> `binanceFutures`. */
const camel = (file: string) => file.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The lines of a markdown file between a line that starts with `from` and the next that starts with `to`. */
function section(text: string, from: string, to: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(from));
  if (start === -1) return [];
  const end = lines.findIndex((l, i) => i > start && l.startsWith(to));
  return lines.slice(start, end === -1 ? undefined : end);
}

/** Whether a markdown table row's first cell lists `id` (cells like `okx`, `okx-swap`). */
const firstCellNames = (row: string, id: string) => (row.split('|')[1] ?? '').split(',').map((s) => s.replace(/`/g, '').trim()).includes(id);

const noFile = 'ingest/venues/<venue>.ts exporting its descriptor';

/** A file and the words of the test that must be in it. */
function fileSays(path: string, what: string, says: (text: string) => boolean): string[] {
  const text = read(path);
  if (text === undefined) return [`${path} (${what})`];
  return says(text) ? [] : [`${path}: ${what}`];
}

function descriptor({ venue, file }: Candidate): string[] {
  if (!file) return [noFile];
  const missing: string[] = [];
  if (!/^\/\/ .*https:\/\//.test(read(`ingest/venues/${file}.ts`) ?? '')) missing.push(`ingest/venues/${file}.ts: a first line that links the venue's documentation`);
  if (!venue.docs.startsWith('https://')) missing.push(`ingest/venues/${file}.ts: docs, an https link to the venue's documentation`);
  return missing;
}

function fixtures({ venue, file }: Candidate): string[] {
  if (!file) return [noFile];
  const dir = `ingest/venues/${file}/__fixtures__/`;
  if (!exists(dir)) return [`${dir} (README.md, SOURCES.md, ws_trade.json, ws_unknown.json, a book frame, a recording)`];
  const names = readdirSync(new URL(dir, root));
  const missing = ['README.md', 'SOURCES.md', 'ws_trade.json', 'ws_unknown.json'].filter((n) => !names.includes(n)).map((n) => dir + n);
  if (!names.some((n) => /^ws_(book|depth)/.test(n))) missing.push(`${dir}ws_book*.json (book frames)`);
  if (venue.channels.includes('liquidations') && !names.some((n) => n.startsWith('ws_liquidation'))) missing.push(`${dir}ws_liquidation*.json (it streams liquidations)`);
  const recorded = names.filter((n) => n.includes('recorded'));
  if (recorded.length === 0) missing.push(`${dir}*recorded*.json (frames recorded from the live venue)`);
  const sources = read(`${dir}SOURCES.md`) ?? '';
  for (const r of recorded) if (!sources.includes(r)) missing.push(`${dir}SOURCES.md naming the source of ${r}`);
  const readme = read(`${dir}README.md`);
  if (readme !== undefined && !readme.includes('https://')) missing.push(`${dir}README.md linking the documentation its hand-written frames follow`);
  return missing;
}

function parserTest({ file, exportName }: Candidate): string[] {
  if (!file || !exportName) return [noFile];
  const imports = new RegExp(`import\\s*\\{([^}]*)\\}\\s*from\\s*'\\.\\./venues/${file}\\.ts'`);
  return fileSays(`ingest/__tests__/${file}.test.ts`, `imports ${exportName} from '../venues/${file}.ts'`, (text) =>
    (imports.exec(text)?.[1] ?? '').split(',').some((name) => name.trim() === exportName),
  );
}

/** stryker.config.mjs: what `npm run mutate` mutates and which test files it runs (no types: plain JavaScript). */
const strykerUrl = new URL('stryker.config.mjs', root).href;
const stryker = ((await import(strykerUrl)) as { default: { mutate: string[]; testFiles: string[] } }).default;

function mutation({ file }: Candidate): string[] {
  if (!file) return [noFile];
  const source = `ingest/venues/${file}.ts`;
  const mutated = stryker.mutate.some((p) => !p.startsWith('!') && matchesGlob(source, p)) && !stryker.mutate.some((p) => p.startsWith('!') && matchesGlob(source, p.slice(1)));
  const missing: string[] = [];
  if (!mutated) missing.push(`stryker.config.mjs: ${source} among the mutated files`);
  if (!stryker.testFiles.includes(`ingest/__tests__/${file}.test.ts`)) missing.push(`stryker.config.mjs: ingest/__tests__/${file}.test.ts in venueTests`);
  return [...missing, ...fileSays('test/MUTATION.md', `a row for \`${source}\` with its score`, (text) => text.includes(`| \`${source}\` |`))];
}

function loadgen({ file }: Candidate): string[] {
  if (!file) return [noFile];
  const missing: string[] = [];
  if (!exists(`test/loadgen/venues/${file}.ts`)) missing.push(`test/loadgen/venues/${file}.ts (its wire format for the load generator)`);
  if (!(file in loadVenueFormats)) missing.push(`test/loadgen/venues/index.ts: loadVenueFormats['${file}']`);
  const listed = (text: string) => (/const venues = \[([^\]]*)\]/.exec(text)?.[1] ?? '').includes(`'${file}'`);
  return [...missing, ...fileSays('test/loadgen/__tests__/loadgen.system.test.ts', `'${file}' in its venues`, listed)];
}

function eventsDoc({ venue }: Candidate): string[] {
  const text = read('ingest/EVENTS.md') ?? '';
  const exchange = findVenue(venue.id)?.name.split(' ')[0] ?? venue.name.split(' ')[0]!;
  const missing: string[] = [];
  if (!section(text, 'Venue by venue', '## ').some((l) => l.startsWith(`- ${exchange}`))) missing.push(`ingest/EVENTS.md: a "- ${exchange} ..." bullet under "Venue by venue"`);
  if (!section(text, '## Verification on recorded live frames', '## ').some((l) => firstCellNames(l, venue.id))) missing.push(`ingest/EVENTS.md: a row for ${venue.id} in "Verification on recorded live frames"`);
  return missing;
}

/** The history system tests: a venue's case is named in one of them. */
const historySystemTests = readdirSync(new URL('ingest/__tests__/', root)).filter((n) => /^history.*\.system\.test\.ts$/.test(n));

/**
 * The trade history: the descriptor's rule; a sequential venue's recorded-format trade frame carries
 * its number; where it has a REST history, the parser test, the simulator and a history system test
 * cover it.
 */
function history({ venue, file }: Candidate): string[] {
  if (!file) return [noFile];
  if (!venue.history) return [`ingest/venues/${file}.ts: history (how missed trades are found: continuity; and recovered: rest)`];
  const missing: string[] = [];
  if (venue.history.continuity === 'sequential') {
    const tradeFrames = read(`ingest/venues/${file}/__fixtures__/ws_trade.json`);
    const frames = tradeFrames === undefined ? [] : (JSON.parse(tradeFrames) as unknown[]).map((f) => (typeof f === 'string' ? f : JSON.stringify(f)));
    const numbered = frames.flatMap((f) => venue.parse(f)).some((m) => m.kind === 'trade' && m.seq !== undefined);
    if (!numbered) missing.push(`ingest/venues/${file}.ts: seq on the trades of ws_trade.json (history.continuity is sequential)`);
  }
  if (!venue.history.rest) return missing;
  missing.push(...fileSays(`ingest/__tests__/${file}.test.ts`, 'tests of history.rest (url and parse)', (t) => /\.history\b/.test(t) && /\burl\(/.test(t)));
  missing.push(...fileSays(`simulator/${camel(file)}Server.ts`, 'the REST trade history served from server.printed', (t) => t.includes('server.printed')));
  const cased = historySystemTests.some((n) => read(`ingest/__tests__/${n}`)!.includes(`'${venue.id}'`));
  if (!cased) missing.push(`ingest/__tests__/history*.system.test.ts: a case for '${venue.id}' (its REST history against the simulator)`);
  return missing;
}

/** The checklist of ingest/venues/ADDING_A_VENUE.md, item by item: what a venue still lacks of each (empty: done). */
const checklist: Record<string, (c: Candidate) => string[]> = {
  descriptor,
  registry: ({ venue }) => (nativeVenues.includes(venue) ? [] : ['ingest/venues/registry.ts: in nativeVenues']),
  catalog: ({ venue }) => {
    const row = findVenue(venue.id);
    const same = row && row.name === venue.name && row.contract === venue.contract && JSON.stringify(row.channels) === JSON.stringify(venue.channels) && row.liquidationsSampled === (venue.liquidations?.sampled === true);
    return same ? [] : [`infra/catalog/venues.json: a row for ${venue.id} with the descriptor's name, contract, channels and liquidationsSampled`];
  },
  tickers: ({ venue }) => (Object.keys((venueAssets as Record<string, Record<string, string>>)[venue.id] ?? {}).length > 0 ? [] : [`infra/catalog/venue-assets.json: the ticker table of ${venue.id}`]),
  ccxt: ({ venue }) => (Object.values(ccxtPolicies).some((p) => Object.values(p.native ?? {}).includes(venue.id)) ? [] : [`ingest/venues/ccxtVenues.ts: ${venue.id} as the native collector of its ccxt exchange`]),
  fixtures,
  'parser-test': parserTest,
  mutation,
  'socket-test': ({ venue, file }) => (file ? fileSays(`ingest/__tests__/${file}.system.test.ts`, `liveVenueSuite({ id: '${venue.id}', ... })`, (t) => t.includes(`liveVenueSuite({ id: '${venue.id}'`)) : [noFile]),
  simulator: ({ venue, file }) => [
    ...(file && exists(`simulator/${camel(file)}Server.ts`) ? [] : [`simulator/${camel(file ?? '<venue>')}Server.ts (its protocol, served from the market model)`]),
    ...((simulatedVenueIds as readonly string[]).includes(venue.id) ? [] : [`simulator/simulator.ts: ${venue.id} in kinds`]),
  ],
  loadgen,
  'events-doc': eventsDoc,
  'venues-doc': ({ venue }) => fileSays('ingest/venues/VENUES.md', `a row for ${venue.id} in each of its tables`, (t) => t.split('\n## ').slice(1).every((part) => part.split('\n').some((l) => l.startsWith('|') && firstCellNames(l, venue.id)))),
  history,
};

const venues = await candidates();

test('the checklist of ADDING_A_VENUE.md is the one checked here, item for item', () => {
  const doc = read('ingest/venues/ADDING_A_VENUE.md') ?? '';
  expect([...doc.matchAll(/^\d+\. \*\*\[([a-z-]+)\]\*\*/gm)].map((m) => m[1])).toEqual(Object.keys(checklist));
});

test('a venue that has none of it lacks every item, each named', () => {
  // The checks themselves can fail: a descriptor no file, registry, catalog, test or document knows.
  const kraken = nativeVenues.find((v) => v.id === 'kraken')!;
  const nowhere: Candidate = { venue: { ...kraken, id: 'acme', name: 'Acme Exchange', docs: 'http://acme.invalid' }, file: 'acme', exportName: 'acme' };
  const lacking = Object.entries(checklist).filter(([, check]) => check(nowhere).length === 0).map(([item]) => item);
  expect(lacking).toEqual([]);
});

test.each(venues.map((c) => [c.venue.id, c] as const))('%s has every item of ingest/venues/ADDING_A_VENUE.md', (id, candidate) => {
  const lacking = Object.entries(checklist).flatMap(([item, check]) => check(candidate).map((what) => `[${item}] ${what}`));
  expect(lacking, `${id} still lacks:\n  ${lacking.join('\n  ')}\n(ingest/venues/ADDING_A_VENUE.md)`).toEqual([]);
});

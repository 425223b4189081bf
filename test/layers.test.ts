// The layout's rules, checked on the code: which folder may import which, what production code may
// never load, no import cycle, routes apart from routes, and one home for the USD quote list. A
// rule broken by a new import fails here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === '__tests__' || name === '__fixtures__') return [];
    if (statSync(join(root, path)).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * An import of a source file: its target as a path from the repository root, and whether it is
 * dynamic (`import('…')`, loaded when the code reaches it) rather than static (`from '…'`, `import '…'`,
 * type-only ones included: loaded with the file, or needed to compile it).
 */
interface Import {
  target: string;
  dynamic: boolean;
}

function importsIn(file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:\bfrom|\bimport)\s*(\()?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => ({ target: relative(root, resolve(root, dirname(file), m[2]!)), dynamic: m[1] !== undefined }));
}

/** Every file a source file imports, as paths from the repository root. */
function importsOf(file: string): string[] {
  return importsIn(file).map((i) => i.target);
}

const layer = (path: string) => path.split('/')[0]!;
/** What each layer may import besides itself: lower layers never import higher ones. */
const allowed: Record<string, readonly string[]> = {
  infra: [],
  ingest: ['infra'],
  aggregate: ['infra'],
  api: ['infra', 'aggregate'],
  // The demo's SIMULATED market: venue protocols on loopback, the history it seeds (test/ and the demo role load it).
  simulator: ['infra', 'ingest', 'aggregate'],
  // `npm run import` (the venues' bulk archives); nothing imports it but infra/roles (the store channel) and its CLI.
  history: ['infra', 'ingest', 'aggregate'],
};
/** What a deployment runs: it ships without test/ and simulator/. */
const production = ['infra', 'ingest', 'aggregate', 'api', 'history'];

test('lower layers never import higher ones; only infra/roles imports every layer', () => {
  // The rule sees history: it is among the layers, and a layer that imports it is broken.
  expect(Object.keys(allowed)).toContain('history');
  expect(Object.values(allowed).some((deps) => deps.includes('history'))).toBe(false);
  const broken: string[] = [];
  for (const dir of [...production, 'simulator']) {
    for (const file of sources(dir)) {
      if (file.startsWith('infra/roles/')) continue;
      for (const target of importsOf(file)) {
        const to = layer(target);
        if (to !== dir && !allowed[dir]!.includes(to)) broken.push(`${file} -> ${target}`);
      }
    }
  }
  expect(broken).toEqual([]);
});

test('production code never imports test/; only the demo role imports the simulator, and only when it runs (dynamically)', () => {
  const refused = (file: string, { target, dynamic }: Import) => layer(target) === 'test' || (layer(target) === 'simulator' && !(file === 'infra/roles/demo.ts' && dynamic));
  const files = production.flatMap(sources);
  const broken = files.flatMap((file) => importsIn(file).filter((i) => refused(file, i)).map((i) => `${file} -> ${i.target}${i.dynamic ? ' (dynamic)' : ''}`));
  expect(broken).toEqual([]);
  // The rule sees the imports it judges: the roles are among the files, and the demo's simulator is found as a dynamic import.
  expect(files).toContain('infra/roles/main.ts');
  expect(importsIn('infra/roles/demo.ts')).toContainEqual({ target: 'simulator/simulator.ts', dynamic: true });
});

/**
 * Cycles of `edges`, each as the path that closes it (`a -> b -> a`), once: a depth-first walk
 * finds at least one in every group of files that import each other in a circle.
 */
function cyclesOf(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles = new Set<string>();
  const done = new Set<string>();
  const path: string[] = [];
  const walk = (file: string) => {
    const at = path.indexOf(file);
    if (at >= 0) {
      const cycle = path.slice(at);
      // Written from its smallest file, so that a cycle reached from several files is listed once.
      const from = cycle.indexOf([...cycle].sort()[0]!);
      cycles.add([...cycle.slice(from), ...cycle.slice(0, from), cycle[from]].join(' -> '));
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const next of edges.get(file) ?? []) walk(next);
    path.pop();
    done.add(file);
  };
  for (const file of edges.keys()) walk(file);
  return [...cycles];
}

test('no import cycle among production files, type-only imports included', () => {
  const files = new Set(production.flatMap(sources));
  const edges = new Map([...files].map((file) => [file, importsOf(file).filter((target) => files.has(target))]));
  expect(cyclesOf(edges)).toEqual([]);
});

test('the cycle walk finds a cycle, a longer one and a file importing itself, each once', () => {
  const edges = new Map([
    ['a', ['b']],
    ['b', ['a', 'c']],
    ['c', ['d']],
    ['d', ['e']],
    ['e', ['c', 'e']],
    ['f', ['a']],
  ]);
  expect(cyclesOf(edges).sort()).toEqual(['a -> b -> a', 'c -> d -> e -> c', 'e -> e']);
});

test('no route imports another route', () => {
  const routes = sources('api/routes');
  const broken = routes.flatMap((file) => importsOf(file).filter((t) => t.startsWith('api/routes/') && t.endsWith('.ts')).map((t) => `${file} -> ${t}`));
  expect(broken).toEqual([]);
});

test('the shared reads, the status page and the stream import no route', () => {
  const broken = ['api/read', 'api/status', 'api/stream'].flatMap((dir) =>
    sources(dir).flatMap((file) => importsOf(file).filter((t) => t.startsWith('api/routes/')).map((t) => `${file} -> ${t}`)),
  );
  expect(broken).toEqual([]);
});

test('the USD quote list is written once, outside the frozen migrations', () => {
  const quoteList = /'USD',\s*'USDT',\s*'USDC'/;
  const holders = ['infra', 'ingest', 'aggregate', 'api']
    .flatMap((dir) => [...sources(dir), ...readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.sql')).map((f) => join(dir, f))])
    // Migrations are frozen history (aggregate/currency/__tests__/usdQuotes.store.test.ts pins the live ones to
    // the constant); a venue's `quotes` is which of its markets it follows, another fact.
    .filter((file) => !file.startsWith('infra/migrations/') && !file.startsWith('ingest/venues/'))
    .filter((file) => quoteList.test(readFileSync(join(root, file), 'utf8')));
  expect(holders).toEqual(['aggregate/currency/currencies.ts']);
});

test('the spec schemas, the oracle of the API responses, import nothing from the API', () => {
  // Written from the spec alone (test/api/specConformance.store.test.ts): a schema derived from the routes would agree with any bug.
  expect(importsOf('test/api/specSchemas.ts').filter((target) => layer(target) === 'api')).toEqual([]);
});

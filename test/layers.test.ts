// The layout's rules, checked on the code: which folder may import which, routes apart from
// routes, and one home for the USD quote list. A rule broken by a new import fails here.
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

/** Every file a source file imports, as paths from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => relative(root, resolve(root, dirname(file), m[1]!)));
}

const layer = (path: string) => path.split('/')[0]!;
/** What each layer may import besides itself: lower layers never import higher ones. */
const allowed: Record<string, readonly string[]> = {
  infra: [],
  ingest: ['infra'],
  aggregate: ['infra'],
  api: ['infra', 'aggregate'],
};

test('lower layers never import higher ones; only infra/roles imports every layer', () => {
  const broken: string[] = [];
  for (const dir of ['infra', 'ingest', 'aggregate', 'api']) {
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

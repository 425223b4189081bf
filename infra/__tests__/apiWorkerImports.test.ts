// The API's worker thread must never load chDB (infra/roles/apiWorker.ts): the engine binds the
// process's one data directory, and a worker thread that loaded its native module takes the whole
// process down with a segmentation fault when the worker exits. Walks what the worker imports as
// values (type-only imports are erased) and fails on any path to the `chdb` package.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { expect, test } from 'vitest';

const valueImport = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** Every module `entry` loads, each with the chain of files that leads to it. */
function valueImports(entry: string): Map<string, string[]> {
  const reached = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift()!;
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(valueImport)) {
      const specifier = match[1] ?? match[2]!;
      const target = specifier.startsWith('.') ? resolve(dirname(file), specifier) : specifier;
      if (reached.has(target)) continue;
      reached.set(target, [...reached.get(file)!, target]);
      if (specifier.startsWith('.') && target.endsWith('.ts')) queue.push(target);
    }
  }
  return reached;
}

test('the API worker loads no chDB module, directly or through what it imports', () => {
  const reached = valueImports(resolve(import.meta.dirname, '../roles/apiWorker.ts'));
  const chdb = [...reached].filter(([module]) => module === 'chdb' || module.startsWith('chdb/'));
  expect(chdb.map(([, chain]) => chain.join(' -> '))).toEqual([]);
  // The walk reaches the API itself: it follows what it should.
  expect([...reached.keys()].some((m) => m.endsWith('api/server.ts'))).toBe(true);
});

test('the walk finds chDB where it is imported: the store module', () => {
  const reached = valueImports(resolve(import.meta.dirname, '../store.ts'));
  expect(reached.has('chdb/connection')).toBe(true);
});

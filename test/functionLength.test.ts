// No function longer than 150 lines, in production code or tests (issue #28): a longer one is cut
// into named parts. Functions are found by parsing each file (Babel's TypeScript parser), so a
// brace in a string or a comment cannot miscount them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from '@babel/parser';
import { expect, test } from 'vitest';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const longestLines = 150;
/** Not the project's code: dependencies, data, and what tools write. */
const skipped = new Set(['node_modules', 'data', 'reports', 'coverage']);

function typescriptFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.name.startsWith('.') || skipped.has(entry.name)) return [];
    if (entry.isDirectory()) return typescriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

interface Node {
  type: string;
  loc?: { start: { line: number }; end: { line: number } };
  [key: string]: unknown;
}

const isFunction = (type: string) => ['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ObjectMethod', 'ClassMethod', 'ClassPrivateMethod'].includes(type);

/** `file:line (lines)` of each function in `source` longer than `longestLines`. */
export function longFunctions(file: string, source: string): string[] {
  const found: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object' || typeof (value as Node).type !== 'string') return;
    const node = value as Node;
    if (isFunction(node.type) && node.loc) {
      const lines = node.loc.end.line - node.loc.start.line + 1;
      if (lines > longestLines) found.push(`${file}:${node.loc.start.line} (${lines} lines)`);
    }
    for (const [key, child] of Object.entries(node)) if (key !== 'loc' && child && typeof child === 'object') visit(child);
  };
  visit(parse(source, { sourceType: 'module', plugins: ['typescript'] }).program);
  return found;
}

test(`no function in the project's TypeScript is longer than ${longestLines} lines`, () => {
  const files = typescriptFiles('');
  // The walk found the tree, not an empty folder.
  expect(files).toContain('aggregate/indexSweep.ts');
  expect(files.flatMap((file) => longFunctions(file, readFileSync(join(root, file), 'utf8')))).toEqual([]);
});

test('a function of 151 lines is found, one of 150 is not, wherever it is nested', () => {
  const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`).join('\n');
  expect(longFunctions('a.ts', `function f() {\n${body(150)}\n}`)).toEqual([]);
  expect(longFunctions('a.ts', `function f() {\n${body(151)}\n}`)).toEqual(['a.ts:1 (151 lines)']);
  expect(longFunctions('b.ts', `describe('x', () => {\n${body(151)}\n});`)).toEqual(['b.ts:1 (151 lines)']);
  expect(longFunctions('c.ts', `class C {\n  m(): void {\n${body(151)}\n  }\n}`)).toEqual(['c.ts:2 (151 lines)']);
});

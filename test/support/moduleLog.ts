// Preloaded into a child process (`node --import <this file> …`) with MDS_TEST_MODULE_LOG naming a
// file: when the process exits, that file lists every module its main thread loaded, one URL a
// line. Tests read it to prove what a process does not load (infra/__tests__/productionTree.system.test.ts).
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const file = process.env.MDS_TEST_MODULE_LOG;
if (file && isMainThread) {
  const loaded = new Set<string>();
  registerHooks({
    load(url, context, nextLoad) {
      loaded.add(url);
      return nextLoad(url, context);
    },
  });
  process.on('exit', () => writeFileSync(file, [...loaded].join('\n')));
}

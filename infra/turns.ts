import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * `items` mapped by `map`, `size` at a time, with a turn of the event loop between each part: the
 * requests that arrived meanwhile are answered before the next part. The API's thread builds its
 * snapshot of thousands of assets this way, so that a cached answer waits for one part of the
 * build, not for all of it (test/bench/RESULTS.md).
 */
export async function mapInTurns<T, R>(items: readonly T[], size: number, map: (item: T, index: number) => R): Promise<R[]> {
  const mapped: R[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % size === 0) await nextTurn();
    mapped.push(map(items[i]!, i));
  }
  return mapped;
}

import { expect, test } from 'vitest';
import { mapInTurns } from '../turns.ts';

test('mapInTurns maps every item in order, with its index', async () => {
  const items = Array.from({ length: 1_001 }, (_, i) => i * 3);
  expect(await mapInTurns(items, 100, (x, i) => `${i}:${x}`)).toEqual(items.map((x, i) => `${i}:${x}`));
  expect(await mapInTurns([], 100, (x) => x)).toEqual([]);
});

test('mapInTurns lets the event loop run between parts: a callback queued before it runs after the first part, long before the last', async () => {
  const mappedWhenCalled: number[] = [];
  let mapped = 0;
  setImmediate(() => mappedWhenCalled.push(mapped));
  await mapInTurns(Array.from({ length: 1_000 }), 100, () => (mapped += 1));
  expect(mappedWhenCalled).toEqual([100]);
});

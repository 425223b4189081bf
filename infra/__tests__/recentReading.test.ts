// A gauge's store reading taken at most once per its age, whatever the scrape rate: calls within
// the age answer the last reading, calls while a read is out share it, a failed read is not kept.
import { expect, test } from 'vitest';
import { recentReading } from '../recentReading.ts';

/** A read that counts its calls and answers `value()` once `release` is called for it. */
function countedRead(value: () => number) {
  const releases: Array<(failure?: Error) => void> = [];
  let calls = 0;
  const read = () => {
    calls++;
    return new Promise<number>((resolve, reject) => releases.push((failure) => (failure ? reject(failure) : resolve(value()))));
  };
  return { read, calls: () => calls, release: (failure?: Error) => releases.shift()!(failure) };
}

test('calls within the age answer the last reading; the first call after it reads again', async () => {
  let clock = 1_000;
  let stored = 7;
  const counted = countedRead(() => stored);
  const reading = recentReading(counted.read, 10_000, () => clock);
  const first = reading();
  counted.release();
  expect(await first).toBe(7);
  stored = 8;
  clock += 9_999;
  expect(await reading()).toBe(7);
  expect(counted.calls()).toBe(1);
  clock += 1;
  const again = reading();
  counted.release();
  expect(await again).toBe(8);
  expect(counted.calls()).toBe(2);
});

test('callers while a read is out share it', async () => {
  const counted = countedRead(() => 5);
  const reading = recentReading(counted.read, 10_000, () => 0);
  const callers = [reading(), reading(), reading()];
  counted.release();
  expect(await Promise.all(callers)).toEqual([5, 5, 5]);
  expect(counted.calls()).toBe(1);
});

test('a failed read fails its callers and is not kept: the next call reads again', async () => {
  const counted = countedRead(() => 3);
  const reading = recentReading(counted.read, 10_000, () => 0);
  const failing = [reading(), reading()];
  counted.release(new Error('store down'));
  for (const caller of failing) await expect(caller).rejects.toThrow('store down');
  const next = reading();
  counted.release();
  expect(await next).toBe(3);
  expect(counted.calls()).toBe(2);
});

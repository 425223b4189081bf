// The Kafka bus's lags and members per group, on their own.
import { expect, test } from 'vitest';
import { ReportedLags } from '../reportedLags.ts';

test('a group\'s lag on a topic is the sum over partitions of the last lag reported on each', () => {
  const lags = new ReportedLags();
  lags.joined('sink');
  lags.report('sink', 'trades', 0, 40);
  lags.report('sink', 'trades', 1, 2);
  lags.report('sink', 'trades', 0, 30);
  lags.report('sink', 'books', 0, 5);
  lags.report('other', 'trades', 0, 9);
  expect(lags.lags()).toEqual([
    { group: 'sink', topic: 'trades', records: 32, members: 1 },
    { group: 'sink', topic: 'books', records: 5, members: 1 },
    { group: 'other', topic: 'trades', records: 9, members: 0 },
  ]);
});

test('members are counted per group as they join and leave', () => {
  const lags = new ReportedLags();
  lags.joined('g');
  lags.joined('g');
  lags.joined('h');
  lags.left('g');
  lags.report('g', 'trades', 0, 0);
  lags.report('h', 'trades', 0, 0);
  expect(lags.lags().map((l) => [l.group, l.members])).toEqual([['g', 1], ['h', 1]]);
});

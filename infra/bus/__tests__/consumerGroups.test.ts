// The groups of the in-process bus on their own: commits, membership, where a new group starts,
// and the release rule (what may leave the log), apart from any log or delivery.
import { expect, test } from 'vitest';
import { ConsumerGroups } from '../consumerGroups.ts';

test('the release point is the lowest commit among the groups reading the topic with a running member', () => {
  const groups = new ConsumerGroups();
  expect(groups.releasePoint('trades', 0)).toBeUndefined();
  groups.join('fast', ['trades']);
  groups.join('slow', ['trades', 'books']);
  // Neither committed: nothing may go.
  expect(groups.releasePoint('trades', 0)).toBe(0);
  groups.commit('fast', 'trades', 0, 7);
  expect(groups.releasePoint('trades', 0)).toBe(0);
  groups.commit('slow', 'trades', 0, 3);
  expect(groups.releasePoint('trades', 0)).toBe(3);
  groups.commit('slow', 'trades', 0, 9);
  expect(groups.releasePoint('trades', 0)).toBe(7);
  // Per partition: partition 1 of trades is still held by both at 0; books by `slow` alone.
  expect(groups.releasePoint('trades', 1)).toBe(0);
  groups.commit('slow', 'books', 0, 4);
  expect(groups.releasePoint('books', 0)).toBe(4);
});

test('a group reading other topics holds nothing back; a group whose members all stopped stops holding, and holds again from its commit when one returns', () => {
  const groups = new ConsumerGroups();
  groups.join('liquidations-reader', ['liquidations']);
  groups.join('reader', ['trades']);
  groups.join('idle', ['trades']);
  groups.join('idle', ['trades']);
  groups.commit('reader', 'trades', 0, 5);
  groups.commit('idle', 'trades', 0, 2);
  expect(groups.releasePoint('trades', 0)).toBe(2);
  groups.leave('idle');
  // One of its two members still runs.
  expect(groups.releasePoint('trades', 0)).toBe(2);
  groups.leave('idle');
  expect(groups.releasePoint('trades', 0)).toBe(5);
  groups.leave('reader');
  // Nobody reads trades: nothing is released, the records wait for the next reader.
  expect(groups.releasePoint('trades', 0)).toBeUndefined();
  groups.join('idle', ['trades']);
  expect(groups.releasePoint('trades', 0)).toBe(2);
  expect(groups.releasePoint('liquidations', 0)).toBe(0);
});

test('a commit never moves a group back', () => {
  const groups = new ConsumerGroups();
  groups.join('g', ['trades']);
  groups.commit('g', 'trades', 1, 8);
  groups.commit('g', 'trades', 1, 5);
  expect(groups.committed('g', 'trades', 1)).toBe(8);
  expect(groups.committed('g', 'trades', 0)).toBe(0);
});

test('start positions apply to a group new here only; a member that joins later adds its topics', () => {
  const groups = new ConsumerGroups();
  groups.join('live', ['trades'], [{ topic: 'trades', partition: 0, offset: 12 }]);
  groups.join('live', ['trades', 'books'], [{ topic: 'trades', partition: 0, offset: 40 }, { topic: 'books', partition: 0, offset: 40 }]);
  expect(groups.committed('live', 'trades', 0)).toBe(12);
  expect(groups.committed('live', 'books', 0)).toBe(0);
  expect([...groups.all()].map((g) => ({ name: g.name, topics: [...g.topics], members: g.members, trades0: g.committed('trades', 0) }))).toEqual([
    { name: 'live', topics: ['trades', 'books'], members: 2, trades0: 12 },
  ]);
});

// Where a Kafka member rewinds after a failed batch, on its own: per partition, the first offset
// delivered since the last commit.
import { expect, test } from 'vitest';
import { UncommittedSpans } from '../uncommittedSpans.ts';

test('a failed batch rewinds every partition delivered since its last commit to the first offset delivered', () => {
  const spans = new UncommittedSpans();
  spans.delivered('trades', 0, 10, 15);
  spans.delivered('trades', 0, 15, 20);
  spans.delivered('books', 3, 4, 5);
  expect(spans.rewind()).toEqual([
    { topic: 'trades', partition: 0, offset: 10 },
    { topic: 'books', partition: 3, offset: 4 },
  ]);
  // Rewound: the next failure rewinds only what is delivered after.
  expect(spans.rewind()).toEqual([]);
});

test('a commit within a span moves its start; a commit at or past its end ends it; other partitions are untouched', () => {
  const spans = new UncommittedSpans();
  spans.delivered('trades', 0, 10, 20);
  spans.delivered('trades', 1, 0, 5);
  spans.delivered('books', 0, 7, 9);
  spans.committed([{ topic: 'trades', partition: 0, offset: 14 }, { topic: 'trades', partition: 1, offset: 5 }, { topic: 'liquidations', partition: 0, offset: 3 }]);
  // A commit behind the span's start does not move it back.
  spans.committed([{ topic: 'books', partition: 0, offset: 2 }]);
  expect(spans.rewind()).toEqual([
    { topic: 'trades', partition: 0, offset: 14 },
    { topic: 'books', partition: 0, offset: 7 },
  ]);
});

test('after a new assignment nothing delivered before it is rewound', () => {
  const spans = new UncommittedSpans();
  spans.delivered('trades', 0, 10, 20);
  spans.clear();
  spans.delivered('trades', 0, 30, 31);
  expect(spans.rewind()).toEqual([{ topic: 'trades', partition: 0, offset: 30 }]);
});

// Markets in the order their next trade is due: a binary min-heap on `nextTradeAt`, so a tick looks
// at the markets with a trade due and never at the idle ones (the universe's long tail). Forty
// lines of heap are not worth a dependency of the simulator.

export interface Scheduled {
  /** When the next trade is due (unix ms, fractional). */
  nextTradeAt: number;
}

export class TradeSchedule<T extends Scheduled> {
  readonly #heap: T[] = [];

  get size(): number {
    return this.#heap.length;
  }

  /** The entry due first, left in place. */
  peek(): T | undefined {
    return this.#heap[0];
  }

  push(item: T): void {
    const heap = this.#heap;
    heap.push(item);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.nextTradeAt <= item.nextTradeAt) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = item;
  }

  /** Takes out the entry due first. */
  pop(): T | undefined {
    const heap = this.#heap;
    const first = heap[0];
    const last = heap.pop();
    if (first === undefined || last === undefined || heap.length === 0) return first;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]!.nextTradeAt < heap[left]!.nextTradeAt ? right : left;
      if (heap[child]!.nextTradeAt >= last.nextTradeAt) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return first;
  }
}

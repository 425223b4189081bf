import { describe, expect, test } from 'vitest';
import { ConnectBudget, connectBudgetOf, type BudgetClock } from '../connectBudget.ts';
import { bitfinex, bitfinexDerivatives } from '../venues/bitfinex.ts';
import { okx, okxSwap } from '../venues/okx.ts';

/** A clock that moves only when told: sleepers wake when it passes their time. */
function heldClock(): BudgetClock & { advanceTo(t: number): Promise<void> } {
  let now = 0;
  const sleepers: { at: number; wake: () => void }[] = [];
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    sleep: (ms) => new Promise<void>((wake) => sleepers.push({ at: now + ms, wake })),
    async advanceTo(t) {
      await settle();
      now = t;
      const due = sleepers.filter((s) => s.at <= t);
      sleepers.splice(0, sleepers.length, ...sleepers.filter((s) => s.at > t));
      for (const s of due) s.wake();
      await settle();
    },
  };
}

/** Records when each turn was given (the clock's time) in the order they were given. */
function record(budget: ConnectBudget, clock: BudgetClock, count: number, given: [number, number][], firstLabel = 0): void {
  for (let i = 0; i < count; i++) void budget.take().then(() => given.push([firstLabel + i, clock.now()]));
}

describe('a venue connection budget (a sliding window)', () => {
  test('3 in a second: five sockets opening at once get 3 turns now and 2 when the first second has passed, in the order asked', async () => {
    const clock = heldClock();
    const budget = new ConnectBudget({ connections: 3, windowMs: 1_000 }, clock);
    const given: [number, number][] = [];
    record(budget, clock, 5, given);
    await clock.advanceTo(0);
    expect(given).toEqual([[0, 0], [1, 0], [2, 0]]);
    expect(budget.waiting).toBe(2);
    await clock.advanceTo(999);
    expect(given).toHaveLength(3);
    await clock.advanceTo(1_000);
    expect(given).toEqual([[0, 0], [1, 0], [2, 0], [3, 1_000], [4, 1_000]]);
    expect(budget.waiting).toBe(0);
  });

  test('the window slides: a turn is free a window after the turn it replaces, not at a fixed boundary', async () => {
    const clock = heldClock();
    const budget = new ConnectBudget({ connections: 3, windowMs: 1_000 }, clock);
    const given: [number, number][] = [];
    for (const [label, at] of [[0, 0], [1, 400], [2, 800]] as const) {
      await clock.advanceTo(at);
      record(budget, clock, 1, given, label);
      await clock.advanceTo(at);
    }
    await clock.advanceTo(900);
    record(budget, clock, 2, given, 3);
    await clock.advanceTo(900);
    expect(given.map(([label]) => label)).toEqual([0, 1, 2]);
    // The turn given at 0 is free at 1,000, the one given at 400 at 1,400.
    await clock.advanceTo(1_000);
    expect(given.at(-1)).toEqual([3, 1_000]);
    await clock.advanceTo(1_399);
    expect(given).toHaveLength(4);
    await clock.advanceTo(1_400);
    expect(given.at(-1)).toEqual([4, 1_400]);
  });

  test('a turn says how long it waited', async () => {
    const clock = heldClock();
    const budget = new ConnectBudget({ connections: 1, windowMs: 60_000 }, clock);
    const waits: number[] = [];
    void budget.take().then((turn) => waits.push(turn.waitedMs));
    await clock.advanceTo(10_000);
    void budget.take().then((turn) => waits.push(turn.waitedMs));
    await clock.advanceTo(60_000);
    expect(waits).toEqual([0, 50_000]);
  });

  test('a limit of no connection, or of no window, is refused', () => {
    expect(() => new ConnectBudget({ connections: 0, windowMs: 1_000 })).toThrow(/at least 1 connection/);
    expect(() => new ConnectBudget({ connections: 5, windowMs: 0 })).toThrow(/at least 1 connection/);
  });

  test("venue ids that reach the same servers share one budget in a process (Bitfinex's spot and derivatives, OKX's spot and swaps)", () => {
    expect(connectBudgetOf(bitfinex.connectLimit!)).toBe(connectBudgetOf(bitfinexDerivatives.connectLimit!));
    expect(connectBudgetOf(okx.connectLimit!)).toBe(connectBudgetOf(okxSwap.connectLimit!));
    expect(connectBudgetOf(okx.connectLimit!)).not.toBe(connectBudgetOf(bitfinex.connectLimit!));
  });

  test('a turn given back (its connection never reached the venue) frees its place at once, and only its own', async () => {
    const clock = heldClock();
    const budget = new ConnectBudget({ connections: 2, windowMs: 60_000 }, clock);
    const refused = await budget.take();
    await budget.take();
    // Given back twice: the second time frees nothing more (the other turn, taken at the same time, stays).
    refused.giveBack();
    refused.giveBack();
    const given: [number, number][] = [];
    record(budget, clock, 2, given);
    await clock.advanceTo(0);
    expect(given).toEqual([[0, 0]]);
    await clock.advanceTo(60_000);
    expect(given).toEqual([[0, 0], [1, 60_000]]);
  });
});

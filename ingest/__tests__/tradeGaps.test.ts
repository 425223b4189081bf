import { describe, expect, it } from 'vitest';
import { TradeGaps, unansweredSubscriptionMs } from '../tradeGaps.ts';
import type { TradeMessage } from '../venue.ts';

const trade = (seq: number | undefined, ts: number, fills?: number, symbol = 'M'): TradeMessage => ({
  kind: 'trade', symbol, tradeId: `t${seq ?? ts}`, price: '1', quantity: '1', side: 'buy', ts, ...(seq === undefined ? {} : { seq }), ...(fills === undefined ? {} : { fills }),
});

describe('a venue that numbers its trades', () => {
  it('finds the numbers a live trade skips, from the last trade seen to it', () => {
    const gaps = new TradeGaps('sequential');
    expect([gaps.observe(trade(1, 10)), gaps.observe(trade(2, 11)), gaps.observe(trade(3, 12))]).toEqual([undefined, undefined, undefined]);
    expect(gaps.observe(trade(6, 20))).toEqual({
      symbol: 'M',
      cause: 'sequence',
      after: { ts: 12, seq: 3, tradeId: 't3' },
      until: { ts: 20, seq: 6, tradeId: 't6' },
      missing: { first: 4, last: 5 },
    });
    expect(gaps.last('M')).toEqual({ ts: 20, seq: 6, tradeId: 't6' });
  });

  it('a message of several fills covers the numbers before its own', () => {
    const gaps = new TradeGaps('sequential');
    gaps.observe(trade(7, 10));
    expect(gaps.observe(trade(10, 11, 3))).toBeUndefined();
    gaps.observe(trade(11, 12));
    expect(gaps.observe(trade(15, 13, 2))?.missing).toEqual({ first: 12, last: 13 });
  });

  it('an older trade (an overlap, a replay) moves nothing; another market is its own', () => {
    const gaps = new TradeGaps('sequential');
    gaps.observe(trade(5, 10));
    expect(gaps.observe(trade(4, 9))).toBeUndefined();
    expect(gaps.observe(trade(5, 10))).toBeUndefined();
    expect(gaps.last('M')?.seq).toBe(5);
    expect(gaps.observe(trade(100, 10, undefined, 'N'))).toBeUndefined();
    expect(gaps.observe(trade(6, 11))).toBeUndefined();
  });

  it('after a reconnect the gap is what the numbers say: none when none skip, its cause the reconnect', () => {
    const gaps = new TradeGaps('sequential');
    gaps.observe(trade(1, 10));
    gaps.interrupted(['M'], 15);
    expect(gaps.observe(trade(2, 20))).toBeUndefined();
    gaps.interrupted(['M'], 25);
    expect(gaps.observe(trade(9, 30))).toMatchObject({ cause: 'reconnect', missing: { first: 3, last: 8 } });
  });
});

describe('a venue whose ids say nothing (time)', () => {
  it('a gap only where the stream was interrupted: from the last trade to the first after', () => {
    const gaps = new TradeGaps('time');
    gaps.observe(trade(undefined, 100));
    expect(gaps.observe(trade(undefined, 150))).toBeUndefined();
    gaps.interrupted(['M'], 160);
    expect(gaps.observe(trade(undefined, 200))).toEqual({ symbol: 'M', cause: 'reconnect', after: { ts: 150, tradeId: 't150' }, until: { ts: 200, tradeId: 't200' } });
    expect(gaps.observe(trade(undefined, 210))).toBeUndefined();
  });

  it('a market with no trade known has nothing to recover from; the bus refusing trades is an interruption too', () => {
    const gaps = new TradeGaps('time');
    gaps.interrupted(['M'], 10);
    expect(gaps.observe(trade(undefined, 20))).toBeUndefined();
    gaps.interrupted(['M'], 30, 'overload');
    expect(gaps.observe(trade(undefined, 40))?.cause).toBe('overload');
  });
});

describe('a start and a quiet market', () => {
  it('at a start the gap runs from the last trade stored to the first live one; a stored id without its number is a time gap', () => {
    const gaps = new TradeGaps('sequential');
    gaps.started(new Map([['M', { ts: 5, seq: 40, tradeId: '40' }], ['N', { ts: 7, tradeId: 'x' }]]), 100);
    expect(gaps.observe(trade(44, 110))).toMatchObject({ cause: 'restart', missing: { first: 41, last: 43 } });
    expect(gaps.observe(trade(3, 120, undefined, 'N'))).toEqual({ symbol: 'N', cause: 'restart', after: { ts: 7, tradeId: 'x' }, until: { ts: 120, seq: 3, tradeId: 't3' } });
  });

  it('a market whose stream came back and stayed quiet for quietMs gets its gap up to now, and once only', () => {
    const gaps = new TradeGaps('time');
    gaps.observe(trade(undefined, 100));
    gaps.observe(trade(undefined, 100, undefined, 'N'));
    gaps.interrupted(['M', 'N'], 200);
    gaps.observe(trade(undefined, 250, undefined, 'N'));
    // Still down long after the drop: not closed, what it misses meanwhile belongs to the gap.
    expect(gaps.due(5_000, 1_000)).toEqual([]);
    gaps.watching(['M', 'N'], 4_900);
    // Subscribed, not carried yet: the quiet clock waits for the market's first message.
    expect(gaps.due(5_999, 1_000)).toEqual([]);
    gaps.streaming('M', 5_000);
    gaps.streaming('N', 5_000);
    expect(gaps.due(5_999, 1_000)).toEqual([]);
    expect(gaps.due(6_200, 1_000)).toEqual([{ symbol: 'M', cause: 'reconnect', after: { ts: 100, tradeId: 't100' }, until: { ts: 6_200 } }]);
    expect(gaps.due(9_000, 1_000)).toEqual([]);
    // The recovery covered up to then; the first live trade after opens the span from then to
    // it (the stream may have carried nothing yet), and the next one nothing.
    expect(gaps.observe(trade(undefined, 10_000))).toEqual({ symbol: 'M', cause: 'reconnect', after: { ts: 6_200 }, until: { ts: 10_000, tradeId: 't10000' } });
    expect(gaps.observe(trade(undefined, 10_500))).toBeUndefined();
  });

  it('a quiet close keeps the number: the first live trade after it finds by number what the recovery up to then did not get', () => {
    const quietAfterDrop = () => {
      const gaps = new TradeGaps('sequential');
      for (const n of [1, 2, 3]) gaps.observe(trade(n, n * 10));
      gaps.interrupted(['M'], 200);
      gaps.watching(['M'], 5_000);
      gaps.streaming('M', 5_000);
      expect(gaps.due(6_200, 1_000)).toEqual([{ symbol: 'M', cause: 'reconnect', after: { ts: 30, seq: 3, tradeId: 't3' }, until: { ts: 6_200 } }]);
      return gaps;
    };
    // The recovery up to 6,200 got trades 4 to 9: the live trade 12 misses 10 and 11 only.
    const recovered = quietAfterDrop();
    recovered.recovered('M', { ts: 6_100, seq: 9, tradeId: 't9' });
    expect(recovered.observe(trade(12, 10_000))).toEqual({ symbol: 'M', cause: 'reconnect', after: { ts: 6_200, seq: 9 }, until: { ts: 10_000, seq: 12, tradeId: 't12' }, missing: { first: 10, last: 11 } });
    expect(recovered.observe(trade(13, 10_100))).toBeUndefined();
    // A live trade before that recovery ended: every number since the last one known (the sink drops what both bring).
    const early = quietAfterDrop();
    expect(early.observe(trade(12, 10_000))).toMatchObject({ cause: 'reconnect', missing: { first: 4, last: 11 } });
    // A recovery that ends after it, with lower numbers, moves nothing.
    early.recovered('M', { ts: 6_100, seq: 9, tradeId: 't9' });
    expect(early.last('M')).toEqual({ ts: 10_000, seq: 12, tradeId: 't12' });
  });

  it('a market the store holds no trade of, on a venue it holds trades of, is recovered from the earliest of their last trades', () => {
    const gaps = new TradeGaps('sequential');
    gaps.started(new Map([['M', { ts: 500, seq: 40, tradeId: '40' }], ['N', { ts: 300, tradeId: 'x' }]]), 1_000);
    gaps.watching(['M', 'N', 'P'], 1_100);
    expect(gaps.observe(trade(9, 1_200, undefined, 'P'))).toEqual({ symbol: 'P', cause: 'restart', after: { ts: 300 }, until: { ts: 1_200, seq: 9, tradeId: 't9' } });
    // Quiet, it is closed as any market whose stream is back.
    gaps.watching(['Q'], 1_100);
    gaps.streaming('Q', 1_100);
    expect(gaps.due(2_100, 1_000)).toContainEqual({ symbol: 'Q', cause: 'restart', after: { ts: 300 }, until: { ts: 2_100 } });
    // With nothing stored of the venue (its first start), a market is watched from its subscription.
    const fresh = new TradeGaps('sequential');
    fresh.started(new Map(), 1_000);
    fresh.watching(['P'], 1_100);
    expect(fresh.observe(trade(9, 1_200, undefined, 'P'))).toBeUndefined();
  });
});

describe('a subscription slow to be answered', () => {
  it('the quiet clock starts at the market\'s first message, not when its socket opened: what it prints meanwhile stays in the gap', () => {
    const gaps = new TradeGaps('time');
    gaps.observe(trade(undefined, 100));
    gaps.interrupted(['M'], 200);
    // The socket is open again at 1,000, but the venue answers the subscription only at 30,000.
    gaps.watching(['M'], 1_000);
    expect(gaps.due(20_000, 10_000)).toEqual([]);
    gaps.streaming('M', 30_000);
    expect(gaps.due(39_999, 10_000)).toEqual([]);
    expect(gaps.due(40_000, 10_000)).toEqual([{ symbol: 'M', cause: 'reconnect', after: { ts: 100, tradeId: 't100' }, until: { ts: 40_000 } }]);
    // A subscription nothing comes on: taken as answered unansweredSubscriptionMs after it.
    const silent = new TradeGaps('time');
    silent.observe(trade(undefined, 100));
    silent.interrupted(['M'], 200);
    silent.watching(['M'], 1_000);
    expect(silent.due(1_000 + unansweredSubscriptionMs + 9_999, 10_000)).toEqual([]);
    expect(silent.due(1_000 + unansweredSubscriptionMs + 10_000, 10_000)).toEqual([{ symbol: 'M', cause: 'reconnect', after: { ts: 100, tradeId: 't100' }, until: { ts: 1_000 + unansweredSubscriptionMs + 10_000 } }]);
    // A message of a market with nothing awaited changes nothing; nor does a second one.
    gaps.streaming('M', 41_000);
    gaps.streaming('N', 41_000);
    expect(gaps.due(60_000, 10_000)).toEqual([]);
  });
});

describe('a market watched before its first trade', () => {
  it('a drop before any trade still has a start: the time its stream was subscribed', () => {
    const gaps = new TradeGaps('sequential');
    gaps.watching(['M'], 50);
    gaps.interrupted(['M'], 60);
    expect(gaps.observe(trade(7, 90))).toEqual({ symbol: 'M', cause: 'reconnect', after: { ts: 50 }, until: { ts: 90, seq: 7, tradeId: 't7' } });
    // Watching again does not move a market whose trades are known.
    gaps.watching(['M'], 100);
    expect(gaps.last('M')).toEqual({ ts: 90, seq: 7, tradeId: 't7' });
  });

  it('its first live trade is where it starts, even one printed before the subscription: a later gap starts at that trade, not at the time watched from', () => {
    // Seen on the simulated Bitstamp under load: trades printed just before the subscription came after
    // it, were ignored as older than the time watched from, and a drop's recovery from that time handed them on again.
    const byTime = new TradeGaps('time');
    byTime.watching(['M'], 1_000);
    expect(byTime.observe(trade(undefined, 990))).toBeUndefined();
    expect(byTime.last('M')).toEqual({ ts: 990, tradeId: 't990' });
    byTime.interrupted(['M'], 1_500);
    expect(byTime.observe(trade(undefined, 3_000))).toEqual({ symbol: 'M', cause: 'reconnect', after: { ts: 990, tradeId: 't990' }, until: { ts: 3_000, tradeId: 't3000' } });
    const numbered = new TradeGaps('sequential');
    numbered.watching(['M'], 1_000);
    expect(numbered.observe(trade(5, 990))).toBeUndefined();
    numbered.interrupted(['M'], 1_500);
    expect(numbered.observe(trade(8, 3_000))?.missing).toEqual({ first: 6, last: 7 });
  });
});

describe('trades the bus refused', () => {
  it('the gap starts before the earliest refused trade, even where later ones got through; its cause is the overload', () => {
    const gaps = new TradeGaps('sequential');
    for (const s of [5, 6, 7, 8, 9, 10]) gaps.observe(trade(s, s * 10));
    gaps.refused('M', { ts: 80, seq: 8 }, 100);
    gaps.refused('M', { ts: 90, seq: 9 }, 101);
    expect(gaps.observe(trade(11, 110))).toMatchObject({ cause: 'overload', after: { ts: 79, seq: 7 }, missing: { first: 8, last: 10 } });
  });

  it('a venue without numbers: from just before the refused trade, by time', () => {
    const gaps = new TradeGaps('time');
    gaps.observe(trade(undefined, 100));
    gaps.observe(trade(undefined, 200));
    gaps.refused('M', { ts: 150 }, 300);
    expect(gaps.observe(trade(undefined, 400))).toEqual({ symbol: 'M', cause: 'overload', after: { ts: 149 }, until: { ts: 400, tradeId: 't400' } });
  });

  it('a market that goes quiet after its trades were refused has its gap closed after the quiet time: its stream never stopped', () => {
    const gaps = new TradeGaps('time');
    gaps.observe(trade(undefined, 100));
    gaps.refused('M', { ts: 150 }, 300);
    expect(gaps.due(1_299, 1_000)).toEqual([]);
    expect(gaps.due(1_300, 1_000)).toEqual([{ symbol: 'M', cause: 'overload', after: { ts: 100, tradeId: 't100' }, until: { ts: 1_300 } }]);
    // A whole market refused likewise.
    gaps.observe(trade(undefined, 2_000));
    gaps.interrupted(['M'], 2_100, 'overload');
    expect(gaps.due(3_100, 1_000)).toEqual([{ symbol: 'M', cause: 'overload', after: { ts: 2_000, tradeId: 't2000' }, until: { ts: 3_100 } }]);
  });
});

describe('trades a venue sends again, and trades at one time', () => {
  it('trades a venue sends again (its last ones, on a new subscription) are no live trade: the market still waits for its stream', () => {
    const gaps = new TradeGaps('sequential');
    for (const n of [1, 2, 3]) gaps.observe(trade(n, n * 10));
    gaps.interrupted(['M'], 200);
    gaps.watching(['M'], 5_000);
    gaps.streaming('M', 5_000);
    expect(gaps.observe(trade(2, 20))).toBeUndefined();
    expect(gaps.observe(trade(3, 30))).toBeUndefined();
    expect(gaps.last('M')).toEqual({ ts: 30, seq: 3, tradeId: 't3' });
    expect(gaps.due(6_000, 1_000)).toEqual([{ symbol: 'M', cause: 'reconnect', after: { ts: 30, seq: 3, tradeId: 't3' }, until: { ts: 6_000 } }]);
  });

  it('a numbered venue\'s trade without a number (an id that is not one) is placed by time: no gap where the stream went on', () => {
    const gaps = new TradeGaps('sequential');
    gaps.observe(trade(1, 10));
    expect(gaps.observe(trade(undefined, 20))).toBeUndefined();
    expect(gaps.last('M')).toEqual({ ts: 20, tradeId: 't20' });
    expect(gaps.observe(trade(2, 30))).toBeUndefined();
  });

  it('at a start whose stored trade has no number, a trade older than it (sent again on subscribing) moves nothing', () => {
    const gaps = new TradeGaps('sequential');
    gaps.started(new Map([['M', { ts: 7, tradeId: 'x' }]]), 100);
    expect(gaps.observe(trade(3, 5))).toBeUndefined();
    expect(gaps.last('M')).toEqual({ ts: 7, tradeId: 'x' });
    expect(gaps.observe(trade(4, 8))).toEqual({ symbol: 'M', cause: 'restart', after: { ts: 7, tradeId: 'x' }, until: { ts: 8, seq: 4, tradeId: 't4' } });
  });

  it('by time, two trades in one millisecond: the later is the last known; an older one moves nothing', () => {
    const gaps = new TradeGaps('time');
    gaps.observe({ ...trade(undefined, 100), tradeId: 'a' });
    expect(gaps.observe({ ...trade(undefined, 100), tradeId: 'b' })).toBeUndefined();
    expect(gaps.last('M')).toEqual({ ts: 100, tradeId: 'b' });
    expect(gaps.observe({ ...trade(undefined, 90), tradeId: 'c' })).toBeUndefined();
    expect(gaps.last('M')).toEqual({ ts: 100, tradeId: 'b' });
    gaps.interrupted(['M'], 150);
    expect(gaps.observe(trade(undefined, 200))).toEqual({ symbol: 'M', cause: 'reconnect', after: { ts: 100, tradeId: 'b' }, until: { ts: 200, tradeId: 't200' } });
  });

  it('by time, numbers the trades carry are not read: no gap where they skip, none kept past a quiet close or a recovery', () => {
    const gaps = new TradeGaps('time');
    expect(gaps.observe(trade(5, 10))).toBeUndefined();
    expect(gaps.observe(trade(9, 20))).toBeUndefined();
    // A later trade with a lower number is still the later trade.
    expect(gaps.observe(trade(3, 30))).toBeUndefined();
    expect(gaps.last('M')).toEqual({ ts: 30, seq: 3, tradeId: 't3' });
    gaps.interrupted(['M'], 40);
    gaps.watching(['M'], 50);
    gaps.streaming('M', 50);
    expect(gaps.due(2_000, 1_000)).toEqual([{ symbol: 'M', cause: 'reconnect', after: { ts: 30, seq: 3, tradeId: 't3' }, until: { ts: 2_000 } }]);
    expect(gaps.last('M')).toEqual({ ts: 2_000 });
    gaps.recovered('M', { ts: 1_900, seq: 12, tradeId: 't12' });
    expect(gaps.last('M')).toEqual({ ts: 2_000 });
    expect(gaps.observe(trade(13, 3_000))).toEqual({ symbol: 'M', cause: 'reconnect', after: { ts: 2_000 }, until: { ts: 3_000, seq: 13, tradeId: 't13' } });
  });
});

describe('a quiet close, a delisting', () => {
  it('a market watched before its first trade, closed quiet: its next live trade counts on from the recovery\'s last number', () => {
    const gaps = new TradeGaps('sequential');
    gaps.watching(['M'], 50);
    gaps.interrupted(['M'], 60);
    gaps.watching(['M'], 1_000);
    gaps.streaming('M', 1_000);
    expect(gaps.due(2_000, 1_000)).toEqual([{ symbol: 'M', cause: 'reconnect', after: { ts: 50 }, until: { ts: 2_000 } }]);
    gaps.recovered('M', { ts: 1_900, seq: 9, tradeId: 't9' });
    expect(gaps.observe(trade(12, 3_000))).toEqual({ symbol: 'M', cause: 'reconnect', after: { ts: 2_000, seq: 9 }, until: { ts: 3_000, seq: 12, tradeId: 't12' }, missing: { first: 10, last: 11 } });
  });

  it('a live trade printed at or before the closing time falls in the closed gap (it came late); one after it, or once a later one came, does not', () => {
    const gaps = new TradeGaps('time');
    // A market it knows nothing of yet (its first trade).
    expect(gaps.closedAfter(trade(undefined, 90))).toBe(false);
    gaps.observe(trade(undefined, 100));
    expect(gaps.closedAfter(trade(undefined, 90))).toBe(false);
    gaps.interrupted(['M'], 200);
    gaps.watching(['M'], 1_000);
    gaps.streaming('M', 1_000);
    expect(gaps.closedAfter(trade(undefined, 1_500))).toBe(false);
    gaps.due(2_000, 1_000);
    expect([gaps.closedAfter(trade(undefined, 1_900)), gaps.closedAfter(trade(undefined, 2_000)), gaps.closedAfter(trade(undefined, 2_001))]).toEqual([true, true, false]);
    gaps.observe(trade(undefined, 2_100));
    expect(gaps.closedAfter(trade(undefined, 1_900))).toBe(false);
  });

  it('a second message before the quiet time does not start the quiet clock again', () => {
    const gaps = new TradeGaps('time');
    gaps.observe(trade(undefined, 100));
    gaps.interrupted(['M'], 200);
    gaps.watching(['M'], 1_000);
    gaps.streaming('M', 1_000);
    gaps.streaming('M', 1_500);
    expect(gaps.due(2_000, 1_000)).toEqual([{ symbol: 'M', cause: 'reconnect', after: { ts: 100, tradeId: 't100' }, until: { ts: 2_000 } }]);
  });

  it('a delisted market is forgotten: nothing known or awaited of it, and a recovery ending after it changes nothing', () => {
    const gaps = new TradeGaps('sequential');
    expect(gaps.last('N')).toBeUndefined();
    for (const n of [1, 2, 3]) gaps.observe(trade(n, n * 10));
    gaps.interrupted(['M'], 200);
    gaps.watching(['M'], 5_000);
    gaps.streaming('M', 5_000);
    gaps.forget('M');
    expect(gaps.last('M')).toBeUndefined();
    expect(gaps.due(9_000, 1_000)).toEqual([]);
    gaps.recovered('M', { ts: 8_000, seq: 9, tradeId: 't9' });
    expect(gaps.last('M')).toBeUndefined();
    // Listed again: its first trade has nothing before it to recover from.
    expect(gaps.observe(trade(7, 10_000))).toBeUndefined();
  });
});

describe('where a refused trade is placed', () => {
  it('a refused trade after the last one known (a recovered one) leaves that one as it is, its id kept', () => {
    const numbered = new TradeGaps('sequential');
    numbered.observe(trade(10, 100));
    numbered.refused('M', { ts: 110, seq: 11 }, 120);
    expect(numbered.last('M')).toEqual({ ts: 100, seq: 10, tradeId: 't10' });
    expect(numbered.observe(trade(12, 130))).toEqual({ symbol: 'M', cause: 'overload', after: { ts: 100, seq: 10, tradeId: 't10' }, until: { ts: 130, seq: 12, tradeId: 't12' }, missing: { first: 11, last: 11 } });
    const byTime = new TradeGaps('time');
    byTime.observe(trade(undefined, 100));
    byTime.refused('M', { ts: 101 }, 120);
    expect(byTime.last('M')).toEqual({ ts: 100, tradeId: 't100' });
    expect(byTime.observe(trade(undefined, 130))).toEqual({ symbol: 'M', cause: 'overload', after: { ts: 100, tradeId: 't100' }, until: { ts: 130, tradeId: 't130' } });
  });

  it('a refused trade without a number (a venue whose ids carry none) is placed by time, and the gap is by time', () => {
    const gaps = new TradeGaps('sequential');
    gaps.observe(trade(10, 100));
    gaps.refused('M', { ts: 80 }, 120);
    expect(gaps.observe(trade(11, 130))).toEqual({ symbol: 'M', cause: 'overload', after: { ts: 79 }, until: { ts: 130, seq: 11, tradeId: 't11' } });
  });

  it('before a last trade known without a number (a market watched from its subscription), a refused trade is placed by time, and numbers count from it', () => {
    const gaps = new TradeGaps('sequential');
    gaps.watching(['M'], 1_000);
    gaps.refused('M', { ts: 990, seq: 7 }, 1_010);
    expect(gaps.observe(trade(8, 1_100))).toEqual({ symbol: 'M', cause: 'overload', after: { ts: 989, seq: 6 }, until: { ts: 1_100, seq: 8, tradeId: 't8' }, missing: { first: 7, last: 7 } });
  });

  it('where both have a number, the number decides, not the time: a quiet close\'s time is this process\'s clock, after a recovered trade\'s', () => {
    const gaps = new TradeGaps('sequential');
    for (const n of [1, 2, 3]) gaps.observe(trade(n, n * 10));
    gaps.interrupted(['M'], 200);
    gaps.watching(['M'], 5_000);
    gaps.streaming('M', 5_000);
    expect(gaps.due(6_200, 1_000)).toHaveLength(1);
    // Trade 5, recovered and refused: the last number known, 3, is before it.
    gaps.refused('M', { ts: 5_000, seq: 5 }, 6_300);
    expect(gaps.observe(trade(12, 10_000))).toEqual({ symbol: 'M', cause: 'overload', after: { ts: 6_200, seq: 3 }, until: { ts: 10_000, seq: 12, tradeId: 't12' }, missing: { first: 4, last: 11 } });
  });
});

describe('trades the bus refused while a recovery ran', () => {
  it('a recovery that ends after a refused recovered trade does not count past it: the next live trade finds it missing', () => {
    const gaps = new TradeGaps('sequential');
    for (const n of [1, 2, 3]) gaps.observe(trade(n, n * 10));
    expect(gaps.observe(trade(12, 120))?.missing).toEqual({ first: 4, last: 11 });
    // The recovery of 4-11 hands over trade 5, which the bus refuses, then ends at 11.
    gaps.refused('M', { ts: 50, seq: 5 }, 130);
    gaps.recovered('M', { ts: 110, seq: 11, tradeId: 't11' });
    expect(gaps.observe(trade(13, 140))).toMatchObject({ cause: 'overload', after: { ts: 49, seq: 4 }, missing: { first: 5, last: 12 } });
  });

  it('of two refused recovered trades, the earlier holds the count back, whichever was refused first', () => {
    for (const order of [[5, 8], [8, 5]]) {
      const gaps = new TradeGaps('sequential');
      for (const n of [1, 2, 3]) gaps.observe(trade(n, n * 10));
      gaps.observe(trade(12, 120));
      for (const n of order) gaps.refused('M', { ts: n * 10, seq: n }, 130);
      gaps.recovered('M', { ts: 110, seq: 11, tradeId: 't11' });
      expect(gaps.observe(trade(13, 140))?.missing, `refused ${order.join(' then ')}`).toEqual({ first: 5, last: 12 });
    }
  });

  it('a later recovery counts on as before once the gap of the refused trade has been found', () => {
    const gaps = new TradeGaps('sequential');
    for (const n of [1, 2, 3]) gaps.observe(trade(n, n * 10));
    gaps.refused('M', { ts: 20, seq: 2 }, 40);
    // The next live trade finds the gap from the refused trade on; its recovery is not held back.
    expect(gaps.observe(trade(4, 40))?.missing).toEqual({ first: 2, last: 3 });
    // Refused again at once (an overload): quiet from then on, its gap is closed at a time and recovered.
    gaps.interrupted(['M'], 50, 'overload');
    expect(gaps.due(50 + 10_000, 10_000)).toHaveLength(1);
    gaps.recovered('M', { ts: 80, seq: 8, tradeId: 't8' });
    expect(gaps.observe(trade(10, 100))?.missing).toEqual({ first: 9, last: 9 });
  });
});

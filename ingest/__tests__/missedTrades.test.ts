// The collector's missed-trade part as the collector wires it: live trades through the real emit
// path, a socket's drop and return, the quiet-market clock, and a model venue's REST history by
// trade number. What the bus gets is compared with what the venue printed.
import { afterEach, expect, test } from 'vitest';
import type { GapEvent, MarketEvent, TradeEvent } from '../../infra/events.ts';
import { silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { EmitPath } from '../emitPath.ts';
import { MissedTrades } from '../missedTrades.ts';
import { toGapEvent } from '../normalize.ts';
import type { HistoryPage, TradeHistoryRule, TradeMessage, VenueMarket } from '../venue.ts';

const btc: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
const trade = (seq: number, ts: number): TradeMessage => ({ kind: 'trade', symbol: 'BTCUSDT', tradeId: String(seq), seq, price: '1', quantity: '1', side: 'buy', ts });

/** A venue's REST history of numbered trades: the page from a number (or after a time). */
const history: TradeHistoryRule = {
  continuity: 'sequential',
  rest: {
    requestsPerSecond: 1_000,
    url: (base, symbol, after) => `${base}/trades?symbol=${symbol}&fromId=${after.seq === undefined ? '' : after.seq + 1}&startTime=${after.ts}`,
    parse: (json) => json as HistoryPage,
  },
};

/** Bitstamp's way: integer ids that rise with time, history times stated in whole seconds. */
const bitstampLike: TradeHistoryRule = {
  continuity: 'time',
  idsRise: true,
  rest: { requestsPerSecond: 1_000, timeResolutionMs: 1_000, url: (base, symbol, after) => `${base}/trades?symbol=${symbol}&ts=${after.ts}`, parse: (json) => json as HistoryPage },
};
/** A second's start, and a trade of that market by id and time. */
const S = 1_000_000_000;
const at = (id: number, ts: number): TradeMessage => ({ kind: 'trade', symbol: 'BTCUSDT', tradeId: String(id), price: '1', quantity: '1', side: 'buy', ts });

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

test('a market quiet after its socket came back: closed at a time, and the first live trade after finds only what that recovery did not get', async () => {
  const printed: TradeMessage[] = [];
  const events: MarketEvent[] = [];
  const getJson = async (url: string): Promise<HistoryPage> => {
    const params = new URL(url).searchParams;
    const fromId = params.get('fromId');
    const after = printed.filter((t) => (fromId ? t.seq! >= Number(fromId) : t.ts > Number(params.get('startTime'))));
    return { trades: after.slice(0, 10), more: after.length > 10 };
  };
  const counters = { trades: 0, liquidations: 0, unknownMessages: 0 };
  let stopped = false;
  // As the collector wires them: the emit path tells the missed trades of each live trade.
  const emitPath = new EmitPath({ venueId: 'model', bus: { publish: (e) => void events.push(...e) }, log: silentLog, market: () => btc, counters, onLiveTrade: (t) => missed.onLiveTrade(t) });
  const missed = new MissedTrades({
    venue: { id: 'model', history },
    restBase: 'http://venue',
    io: { getJson },
    emitPath,
    onGap: (report) => events.push(toGapEvent('model', btc, report, Date.now())),
    log: silentLog,
    wait: async () => {},
    stopped: () => stopped,
    quietMs: 200,
  });
  stop = async () => {
    stopped = true;
    await missed.close();
  };
  const print = (seq: number, live: boolean) => {
    const t = trade(seq, Math.max(Date.now(), (printed.at(-1)?.ts ?? 0) + 1));
    printed.push(t);
    if (live) emitPath.emit([t], Date.now());
  };
  const gapsEnded = () => events.filter((e): e is GapEvent => e.type === 'gap' && e.state !== 'open');

  missed.watching(['BTCUSDT']);
  for (const n of [1, 2, 3]) print(n, true);
  missed.interrupted(['BTCUSDT']);
  for (const n of [4, 5, 6, 7, 8, 9]) print(n, false);
  // Back (subscribed, then its first message: a book change), and quiet: after quietMs the gap is
  // closed at that time and recovered up to it.
  missed.watching(['BTCUSDT']);
  missed.streaming('BTCUSDT');
  await until(() => gapsEnded().length === 1, 'the quiet market closed and recovered', 5_000);
  // Trades the stream did not carry yet, then the first live one.
  for (const n of [10, 11]) print(n, false);
  print(12, true);
  await until(() => gapsEnded().length === 2, 'the gap up to the first live trade recovered', 5_000);

  const published = events.filter((e): e is TradeEvent => e.type === 'trade').map((t) => Number(t.tradeId));
  expect([...published].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  expect(gapsEnded().map((g) => [g.state, g.cause, g.fromSeq, g.toSeq, g.recovered])).toEqual([
    ['recovered', 'reconnect', undefined, undefined, 6],
    ['recovered', 'reconnect', 10, 11, 2],
  ]);
});

/**
 * The emit path and the missed trades wired as the collector wires them, over a Bitstamp-like venue
 * whose history `getJson` answers, on a clock the test sets (from S - 5 s); `stop` ends them.
 */
function wiredOnClock(getJson: () => Promise<HistoryPage>, onStop: () => void = () => {}) {
  const clock = { now: S - 5_000 };
  const events: MarketEvent[] = [];
  const counters = { trades: 0, liquidations: 0, unknownMessages: 0 };
  let stopped = false;
  const emitPath = new EmitPath({ venueId: 'model', bus: { publish: (e) => void events.push(...e) }, log: silentLog, market: () => btc, counters, onLiveTrade: (t) => missed.onLiveTrade(t) });
  const missed = new MissedTrades({
    venue: { id: 'model', history: bitstampLike },
    restBase: 'http://venue',
    io: { getJson },
    emitPath,
    onGap: (report) => events.push(toGapEvent('model', btc, report, clock.now)),
    log: silentLog,
    wait: async () => {},
    stopped: () => stopped,
    quietMs: 200,
    now: () => clock.now,
  });
  stop = async () => {
    stopped = true;
    onStop();
    await missed.close();
  };
  /** Gap events: the ones opened, or those ended. */
  const gaps = (state: 'open' | 'ended') => events.filter((e): e is GapEvent => e.type === 'gap' && (state === 'open') === (e.state === 'open'));
  return { clock, events, counters, emitPath, missed, gaps };
}

/**
 * `first` live, the socket down at S - 3 s, back at S + 100 ms and quiet: at S + 500 ms (the clock
 * left there) the market's gap is closed at that time, once the quiet clock next looks.
 */
function liveThenQuiet({ clock, emitPath, missed }: ReturnType<typeof wiredOnClock>, first: TradeMessage): void {
  missed.watching(['BTCUSDT']);
  emitPath.emit([first], clock.now);
  clock.now = S - 3_000;
  missed.interrupted(['BTCUSDT']);
  clock.now = S + 100;
  missed.watching(['BTCUSDT']);
  missed.streaming('BTCUSDT');
  clock.now = S + 500;
}

test('a recovered trade the bus refused is recovered again, though the gap that handed it was closed at a time in its second', async () => {
  // Bitstamp's way, its history's times finer than stated: 2 shows S + 300.
  const printed = [at(1, S - 4_000), at(2, S + 300), at(3, S + 2_000)];
  const wired = wiredOnClock(async () => ({ trades: printed, more: false }));
  const { clock, events, emitPath, missed, gaps } = wired;
  const handed = (id: string) => events.filter((e): e is TradeEvent => e.type === 'trade' && e.tradeId === id).length;

  // Back at S + 100, quiet until S + 500: the gap is closed at that time and hands on 2.
  liveThenQuiet(wired, printed[0]!);
  await until(() => gaps('ended').length === 1, 'the quiet market closed and recovered', 5_000);
  expect(handed('2')).toBe(1);
  // The bus refused it; the first live trade after finds the gap from just before it.
  missed.refused([{ market: 'BTCUSDT', ts: S + 300, tradeId: '2' }]);
  clock.now = S + 2_100;
  emitPath.emit([printed[2]!], clock.now);
  await until(() => gaps('ended').length === 2, 'the gap the refusal opened recovered', 5_000);
  expect(handed('2')).toBe(2);
});

test('a live trade printed before the time a quiet market was closed at, delivered after it: published once, whether the recovery got to it first, between its pages, or not yet', async () => {
  // The market is closed quiet at S + 500; trades 2 and 4, printed at S - 200 and S + 400 (the
  // second before the closing time's, and its own), come live only then (the venue's delay, or ours).
  const run = async (lateComes: 'after its recovery' | 'between its pages' | 'while its recovery waits') => {
    const printed = [at(1, S - 4_000), at(2, S - 200), at(3, S + 300), at(4, S + 400)];
    let open = () => {};
    const venueAnswers = new Promise<void>((resolve) => (open = resolve));
    let asked = 0;
    const getJson = async () => {
      asked += 1;
      // Between its pages: the first page hands on 2, the second waits.
      if (lateComes === 'between its pages' && asked === 1) return { trades: printed.slice(0, 2), more: true };
      if (lateComes !== 'after its recovery') await venueAnswers;
      return { trades: [...printed], more: false };
    };
    const wired = wiredOnClock(getJson, () => open());
    const { clock, events, counters, emitPath, gaps } = wired;

    liveThenQuiet(wired, printed[0]!);
    if (lateComes === 'after its recovery') await until(() => gaps('ended').length === 1, 'the quiet market closed and recovered', 5_000);
    else await until(() => gaps('open').length === 1 && asked === (lateComes === 'between its pages' ? 2 : 1), 'the quiet market closed, its recovery waiting on the venue', 5_000);
    clock.now = S + 600;
    emitPath.emit([printed[1]!, printed[3]!], clock.now);
    open();
    await until(() => gaps('ended').length === 1, 'the quiet market recovered', 5_000);
    // Then the stream carries the market: the gap from the closing time to that trade.
    printed.push(at(5, S + 2_000));
    clock.now = S + 2_100;
    emitPath.emit([printed[4]!], clock.now);
    await until(() => gaps('ended').length === 2, 'both gaps recovered', 5_000);
    await stop?.();
    stop = undefined;
    const published = events.filter((e): e is TradeEvent => e.type === 'trade').map((t) => t.tradeId);
    return { published: [...published].sort(), counted: counters.trades };
  };
  for (const lateComes of ['after its recovery', 'between its pages', 'while its recovery waits'] as const) {
    const { published, counted } = await run(lateComes);
    expect(published, lateComes).toEqual(['1', '2', '3', '4', '5']);
    expect(counted, `${lateComes}: the collector's count of trades published`).toBe(5);
  }
});

// The recovery loop against a model venue: a list of trades served by pages from a cursor, as a
// venue's REST history does, through a rule whose url carries the cursor and whose parse reads it
// back. No sockets: the venue is a function, the clock a counter.
import { describe, expect, it } from 'vitest';
import { silentLog } from '../../test/support/harness.ts';
import { HistoryRecovery, togetherWithinMs, type GapReport, type HistoryRecoveryOptions } from '../historyRecovery.ts';
import type { FoundGap } from '../tradeGaps.ts';
import type { HistoryPage, TradeHistoryRule, TradeMessage } from '../venue.ts';

const trade = (seq: number | undefined, ts: number, id = `t${seq ?? ts}`): TradeMessage => ({
  kind: 'trade', symbol: 'M', tradeId: id, price: '1', quantity: '1', side: 'sell', ts, ...(seq === undefined ? {} : { seq }),
});

interface ModelVenue {
  trades: TradeMessage[];
  pageSize: number;
  /** Only the latest `latestOnly` trades, whatever the cursor. */
  latestOnly?: number;
  /** Requests answered with an error before the venue answers. */
  failFirst?: number;
  /** Every request from this many answered on is refused. */
  refuseAfter?: number;
  /** Every trade it holds at once, whatever the cursor (Bitstamp's last day). */
  everything?: boolean;
}

/** A rule over a model venue: the url names the cursor, getJson answers the page after it. */
function modelRule(venue: ModelVenue, continuity: TradeHistoryRule['continuity'], extra: Partial<NonNullable<TradeHistoryRule['rest']>> = {}) {
  const rule: TradeHistoryRule = {
    continuity,
    rest: {
      requestsPerSecond: 2,
      url: (base, symbol, after) => `${base}/${symbol}?seq=${after.seq ?? ''}&ts=${after.ts}`,
      parse: (json) => json as HistoryPage,
      ...(venue.latestOnly === undefined ? {} : { latestOnly: venue.latestOnly }),
      ...extra,
    },
  };
  const urls: string[] = [];
  const getJson = async (url: string): Promise<unknown> => {
    urls.push(url);
    if (venue.refuseAfter !== undefined && urls.length > venue.refuseAfter) throw new Error('429 too many requests');
    if ((venue.failFirst ?? 0) > 0) {
      venue.failFirst! -= 1;
      throw new Error('429 too many requests');
    }
    if (venue.latestOnly !== undefined) return { trades: venue.trades.slice(-venue.latestOnly), more: false };
    if (venue.everything) return { trades: venue.trades, more: false };
    const params = new URL(url).searchParams;
    const seq = params.get('seq');
    const ts = Number(params.get('ts'));
    const after = venue.trades.filter((t) => (seq ? t.seq! > Number(seq) : t.ts > ts));
    return { trades: after.slice(0, venue.pageSize), more: after.length > venue.pageSize };
  };
  return { rule, urls, getJson };
}

function recovery(rule: TradeHistoryRule | undefined, getJson: (url: string) => Promise<unknown>, more: Partial<HistoryRecoveryOptions> = {}) {
  let now = 1_000_000;
  const waits: number[] = [];
  const emitted: TradeMessage[][] = [];
  const reports: GapReport[] = [];
  const r = new HistoryRecovery({
    venueId: 'model',
    rule,
    restBase: 'http://venue',
    getJson,
    emit: (trades) => void emitted.push([...trades]),
    report: (report) => void reports.push(report),
    log: silentLog,
    wait: async (ms) => {
      waits.push(ms);
      now += ms;
    },
    stopped: () => false,
    now: () => now,
    ...more,
  });
  return { r, waits, emitted, reports, at: () => now };
}

const seqGap = (after: number, until: number, afterTs = 999_000): FoundGap => ({
  symbol: 'M',
  cause: 'sequence',
  after: { ts: afterTs, seq: after, tradeId: `t${after}` },
  until: { ts: afterTs + 1_000, seq: until, tradeId: `t${until}` },
  missing: { first: after + 1, last: until - 1 },
});

describe('a venue that numbers its trades', () => {
  it('pages from the last trade before the gap to the first after, hands over each missing trade once, in order, at the venue pace', async () => {
    const venue: ModelVenue = { trades: Array.from({ length: 30 }, (_, i) => trade(i + 1, 999_000 + i)), pageSize: 4 };
    const { rule, urls, getJson } = modelRule(venue, 'sequential');
    const { r, waits, emitted, reports } = recovery(rule, getJson);
    r.enqueue(seqGap(3, 14));
    await r.idle();
    expect(emitted.flat().map((t) => t.seq)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(urls.map((u) => new URL(u).searchParams.get('seq'))).toEqual(['3', '7', '11']);
    // Two requests a second: the second and third wait half a second after the one before.
    expect(waits).toEqual([500, 500]);
    expect(reports.map((x) => [x.state, x.recovered, x.missing, x.absent, x.reason])).toEqual([
      ['open', 0, 10, undefined, undefined],
      ['recovered', 10, 10, 0, undefined],
    ]);
    expect(r.stats()).toMatchObject({ pending: 0, requests: 3, failedRequests: 0, recoveredTrades: 10, gaps: { recovered: 1, partly_recovered: 0, unrecoverable: 0 } });
  });

  it('numbers the venue history skips while it goes past them were never trades: the gap is recovered, and says so', async () => {
    const venue: ModelVenue = { trades: [1, 2, 3, 4, 6, 7, 8].map((s) => trade(s, 999_000 + s)), pageSize: 10 };
    const { rule, getJson } = modelRule(venue, 'sequential');
    const { r, reports } = recovery(rule, getJson);
    r.enqueue(seqGap(2, 8));
    await r.idle();
    expect(reports.at(-1)).toMatchObject({ state: 'recovered', reason: 'ids_never_traded', recovered: 4, missing: 5, absent: 1 });
  });

  it('a gap older than the history reaches: what is left is recovered, the rest is beyond reach', async () => {
    const venue: ModelVenue = { trades: [6, 7, 8, 9].map((s) => trade(s, 999_000 + s)), pageSize: 10 };
    const { rule, getJson } = modelRule(venue, 'sequential', { reachMs: 10_000 });
    const { r, reports } = recovery(rule, getJson);
    r.enqueue(seqGap(2, 9, 900_000));
    await r.idle();
    expect(reports.at(-1)).toMatchObject({ state: 'partly_recovered', reason: 'beyond_rest_reach', recovered: 3, missing: 6, absent: 3 });
  });

  it('a venue that keeps refusing: retried with doubling waits, then unrecoverable for that reason', async () => {
    const venue: ModelVenue = { trades: [trade(1, 1), trade(5, 5)], pageSize: 10, failFirst: 99 };
    const { rule, urls, getJson } = modelRule(venue, 'sequential');
    const { r, waits, reports } = recovery(rule, getJson, { attempts: 3, retryMs: 100 });
    r.enqueue(seqGap(1, 5));
    await r.idle();
    expect(urls).toHaveLength(3);
    expect(waits).toEqual([100, 400, 200, 300, 400]);
    expect(reports.at(-1)).toMatchObject({ state: 'unrecoverable', reason: 'venue_refused', recovered: 0, missing: 3, absent: 3 });
    expect(r.stats()).toMatchObject({ requests: 3, failedRequests: 3 });
  });

  it('a gap from a time (no trade seen before the drop) to a numbered live trade: later trades of that trade\'s millisecond are not taken, they came live', async () => {
    // Seen on the simulated Binance: the first live trade after the reconnect and the next one share a millisecond.
    const venue: ModelVenue = { trades: [trade(7, 999_100), trade(8, 999_400), trade(9, 999_500), trade(10, 999_500), trade(11, 999_500)], pageSize: 10 };
    const { rule, getJson } = modelRule(venue, 'sequential');
    const { r, emitted, reports } = recovery(rule, getJson);
    r.enqueue({ symbol: 'M', cause: 'reconnect', after: { ts: 999_000 }, until: { ts: 999_500, seq: 10, tradeId: 't10' } });
    await r.idle();
    expect(emitted.flat().map((t) => t.seq)).toEqual([7, 8, 9]);
    expect(reports.at(-1)).toMatchObject({ state: 'recovered', recovered: 3, through: { ts: 999_500, seq: 9, tradeId: 't9' } });
  });

  it('a venue with no history rule at all: the gap is unrecoverable at once', async () => {
    const { r, reports } = recovery(undefined, async () => ({}));
    r.enqueue(seqGap(1, 4));
    await r.idle();
    expect(reports).toEqual([expect.objectContaining({ state: 'unrecoverable', reason: 'no_rest_history', missing: 2, absent: 2 })]);
  });

  it('a venue with no REST history: the gap is unrecoverable at once', async () => {
    const { r, reports } = recovery({ continuity: 'sequential' }, async () => ({}));
    r.enqueue(seqGap(1, 4));
    await r.idle();
    expect(reports).toEqual([expect.objectContaining({ state: 'unrecoverable', reason: 'no_rest_history', missing: 2, absent: 2 })]);
  });
});

describe('a venue whose ids say nothing (time)', () => {
  const timeGap = (after: number, until: number, untilId?: string): FoundGap => ({
    symbol: 'M',
    cause: 'reconnect',
    after: { ts: after, tradeId: `t${after}` },
    until: { ts: until, ...(untilId === undefined ? {} : { tradeId: untilId }) },
  });

  it('recovers the trades between the last before and the first after, not the first after itself', async () => {
    const venue: ModelVenue = { trades: [100, 150, 150, 180, 200, 230].map((ts, i) => trade(undefined, 999_000 + ts, `id${i}`)), pageSize: 2 };
    const { rule, getJson } = modelRule(venue, 'time');
    const { r, emitted, reports } = recovery(rule, getJson);
    r.enqueue({ ...timeGap(999_100, 999_200, 'id4'), after: { ts: 999_100, tradeId: 'id0' } });
    await r.idle();
    expect(emitted.flat().map((t) => t.tradeId)).toEqual(['id1', 'id2', 'id3']);
    expect(reports).toEqual([
      expect.objectContaining({ state: 'open', recovered: 0 }),
      expect.objectContaining({ state: 'recovered', recovered: 3, gap: expect.objectContaining({ cause: 'reconnect' }) }),
    ]);
  });

  it('a reconnect that missed nothing: opened, then ended recovered with no trade', async () => {
    const venue: ModelVenue = { trades: [trade(undefined, 999_100, 'a'), trade(undefined, 999_300, 'b')], pageSize: 10 };
    const { rule, getJson } = modelRule(venue, 'time');
    const { r, reports, emitted } = recovery(rule, getJson);
    r.enqueue(timeGap(999_100, 999_300, 'b'));
    await r.idle();
    expect(emitted).toEqual([]);
    expect(reports.map((x) => [x.state, x.recovered])).toEqual([
      ['open', 0],
      ['recovered', 0],
    ]);
  });

  it('a venue that serves only its latest trades: a full page that starts after the gap leaves it partly recovered', async () => {
    const venue: ModelVenue = { trades: Array.from({ length: 10 }, (_, i) => trade(undefined, 999_000 + i * 10, `x${i}`)), pageSize: 10, latestOnly: 3 };
    const { rule, getJson } = modelRule(venue, 'time');
    const short = recovery(rule, getJson);
    short.r.enqueue(timeGap(999_005, 999_095));
    await short.r.idle();
    expect(short.reports.at(-1)).toEqual(expect.objectContaining({ state: 'partly_recovered', reason: 'beyond_rest_reach', recovered: 3 }));
    // The same venue when the gap is within its latest trades: recovered.
    const within = recovery(rule, getJson);
    within.r.enqueue(timeGap(999_075, 999_095));
    await within.r.idle();
    expect(within.reports.at(-1)).toEqual(expect.objectContaining({ state: 'recovered', recovered: 2 }));
  });
});

describe('several gaps of one market queued near each other (a restart after a burst)', () => {
  const gap = (symbol: string, after: number, until: number, gapId: string): FoundGap => ({
    symbol, cause: 'overload', gapId, after: { ts: after, tradeId: `t${after}` }, until: { ts: until, tradeId: `t${until}` },
  });

  it('are paged in one pass, each ended with its own trades, none of the live ones between handed on; a gap far from them has its own pass', async () => {
    const venue: ModelVenue = { trades: Array.from({ length: 60 }, (_, i) => trade(undefined, 1_000 + i * 10, `t${1_000 + i * 10}`)), pageSize: 1_000 };
    const { rule, getJson, urls } = modelRule(venue, 'time');
    const { r, emitted, reports } = recovery(rule, getJson);
    // Another market's gap first: the drain is busy with it while those of M queue up.
    r.enqueue(gap('X', 1_000, 1_010, 'x'));
    r.enqueue(gap('M', 1_100, 1_200, 'g1'));
    r.enqueue(gap('M', 1_300, 1_400, 'g2'));
    r.enqueue(gap('M', 1_450, 1_500, 'g3'));
    r.enqueue(gap('M', 1_000 + 10 * 60_000, 1_000 + 11 * 60_000, 'far'));
    await r.idle();
    expect(urls.filter((u) => u.includes('/M?'))).toHaveLength(2);
    const ended = Object.fromEntries(reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, [x.state, x.recovered, x.through?.tradeId]]));
    expect(ended).toEqual({ x: ['recovered', 0, undefined], g1: ['recovered', 9, 't1190'], g2: ['recovered', 9, 't1390'], g3: ['recovered', 4, 't1490'], far: ['recovered', 0, undefined] });
    const handed = emitted.flat().map((t) => t.ts);
    const inside = venue.trades.map((t) => t.ts).filter((ts) => (ts > 1_100 && ts < 1_200) || (ts > 1_300 && ts < 1_400) || (ts > 1_450 && ts < 1_500));
    expect(handed).toEqual(inside);
  });

  it('numbered gaps, queued in any order: each ends with its own missing and absent numbers', async () => {
    // 7 never traded (a number the venue skipped): the first gap is recovered all the same.
    const venue: ModelVenue = { trades: Array.from({ length: 40 }, (_, i) => trade(i + 1, 999_000 + i)).filter((t) => t.seq !== 7), pageSize: 100 };
    const { rule, getJson, urls } = modelRule(venue, 'sequential');
    const { r, reports } = recovery(rule, getJson);
    r.enqueue({ ...seqGap(1, 2), symbol: 'X' });
    r.enqueue({ ...seqGap(20, 25, 999_019), gapId: 'late' });
    r.enqueue({ ...seqGap(3, 9, 999_002), gapId: 'early' });
    await r.idle();
    expect(urls.filter((u) => u.includes('/M?'))).toHaveLength(1);
    const ended = Object.fromEntries(reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, [x.state, x.recovered, x.missing, x.absent, x.reason]]));
    expect(ended).toMatchObject({ early: ['recovered', 4, 5, 1, 'ids_never_traded'], late: ['recovered', 4, 4, 0, undefined] });
  });

  it('a venue that refuses past the first gap of a pass: that one recovered, the next refused; one serving only its latest trades pages gap by gap', async () => {
    const trades = Array.from({ length: 60 }, (_, i) => trade(undefined, 1_000 + i * 10, `t${1_000 + i * 10}`));
    const refusing = modelRule({ trades, pageSize: 12, refuseAfter: 2 }, 'time');
    const cut = recovery(refusing.rule, refusing.getJson, { attempts: 2 });
    cut.r.enqueue(gap('X', 1_000, 1_010, 'x'));
    cut.r.enqueue(gap('M', 1_100, 1_200, 'g1'));
    cut.r.enqueue(gap('M', 1_300, 1_500, 'g2'));
    await cut.r.idle();
    const ended = Object.fromEntries(cut.reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, [x.state, x.recovered, x.reason]]));
    expect(ended).toMatchObject({ g1: ['recovered', 9, undefined], g2: ['unrecoverable', 0, 'venue_refused'] });

    const latest = modelRule({ trades, pageSize: 100, latestOnly: 100 }, 'time');
    const apart = recovery(latest.rule, latest.getJson);
    apart.r.enqueue(gap('X', 1_000, 1_010, 'x'));
    apart.r.enqueue(gap('M', 1_100, 1_200, 'g1'));
    apart.r.enqueue(gap('M', 1_300, 1_400, 'g2'));
    await apart.r.idle();
    expect(latest.urls.filter((u) => u.includes('/M?'))).toHaveLength(2);
  });
});

/** A gap of the pass tests below: its market, start and end (ms, each a trade numbered by its time) and id. */
const passGap = (symbol: string, after: number, until: number, gapId: string): FoundGap => ({
  symbol, cause: 'overload', gapId, after: { ts: after, tradeId: `t${after}` }, until: { ts: until, tradeId: `t${until}` },
});
/** A venue with a trade every 10 s from 0 to 20 min, one page holding them all. */
const passVenue = (): ModelVenue => ({ trades: Array.from({ length: 121 }, (_, i) => trade(undefined, i * 10_000, `t${i * 10_000}`)), pageSize: 1_000 });
/** Runs the gaps of M behind a gap of X that keeps the drain busy while they queue; the start (ts) of each pass over M, and each gap's end. */
async function passesOverM(gaps: FoundGap[], model = passVenue(), extra: Partial<NonNullable<TradeHistoryRule['rest']>> = {}, options: Partial<HistoryRecoveryOptions> = {}) {
  const { rule, getJson, urls } = modelRule(model, 'time', extra);
  const { r, reports } = recovery(rule, getJson, options);
  r.enqueue(passGap('X', 0, 5, 'busy'));
  for (const g of gaps) r.enqueue(g);
  await r.idle();
  const starts = urls.filter((u) => u.includes('/M?')).map((u) => Number(new URL(u).searchParams.get('ts')));
  const ended = Object.fromEntries(reports.filter((x) => x.state !== 'open' && x.gapId !== 'busy').map((x) => [x.gapId, [x.state, x.recovered, x.reason]]));
  return { starts, ended };
}

describe('which queued gaps share a pass: within togetherWithinMs of the span so far, same market, paging from its earliest start to its latest end', () => {
  it('a gap starting exactly togetherWithinMs after the span ends joins it; one starting a millisecond later has its own pass', async () => {
    expect(togetherWithinMs).toBe(120_000);
    expect((await passesOverM([passGap('M', 100_000, 200_000, 'a'), passGap('M', 320_000, 400_000, 'b')])).starts).toEqual([100_000]);
    expect((await passesOverM([passGap('M', 100_000, 200_000, 'a'), passGap('M', 320_001, 400_000, 'b')])).starts).toEqual([100_000, 320_001]);
  });

  it('a gap ending exactly togetherWithinMs before the span starts joins it; one ending a millisecond earlier has its own pass', async () => {
    expect((await passesOverM([passGap('M', 400_000, 500_000, 'a'), passGap('M', 200_000, 280_000, 'b')])).starts).toEqual([200_000]);
    expect((await passesOverM([passGap('M', 400_000, 500_000, 'a'), passGap('M', 200_000, 279_999, 'b')])).starts).toEqual([400_000, 200_000]);
  });

  it('the span grows with each gap it takes, both ways: gaps each near the one before join, though far from the first; each ends with its own trades', async () => {
    // c is near a only once b has joined, d only once e has (each 100 s from its neighbour, 300 s or more from a).
    const { starts, ended } = await passesOverM([
      passGap('M', 500_000, 520_000, 'a'),
      passGap('M', 720_000, 740_000, 'c'),
      passGap('M', 620_000, 640_000, 'b'),
      passGap('M', 280_000, 300_000, 'd'),
      passGap('M', 400_000, 420_000, 'e'),
    ]);
    expect(starts).toEqual([280_000]);
    // A trade every 10 s: 10 s, 510 s, 630 s (...) inside each 20 s gap.
    expect(ended).toEqual({ a: ['recovered', 1, undefined], b: ['recovered', 1, undefined], c: ['recovered', 1, undefined], d: ['recovered', 1, undefined], e: ['recovered', 1, undefined] });
  });

  it('the pass starts at the earliest start and reaches the latest end, wherever those gaps are in the queue', async () => {
    // Taken as b, a, d, c: the earliest start (a) and the latest end (d) are neither first nor last.
    const { starts, ended } = await passesOverM([passGap('M', 400_000, 425_000, 'b'), passGap('M', 300_000, 325_000, 'a'), passGap('M', 600_000, 625_000, 'd'), passGap('M', 500_000, 525_000, 'c')]);
    expect(starts).toEqual([300_000]);
    expect(ended).toEqual({ a: ['recovered', 2, undefined], b: ['recovered', 2, undefined], c: ['recovered', 2, undefined], d: ['recovered', 2, undefined] });
  });

  it('another market\'s gaps queued between them are not taken: each market has its own pass', async () => {
    const { rule, getJson, urls } = modelRule(passVenue(), 'time');
    const { r, reports, emitted } = recovery(rule, getJson);
    r.enqueue(passGap('X', 0, 5, 'busy'));
    r.enqueue(passGap('M', 100_000, 125_000, 'm1'));
    r.enqueue(passGap('Y', 130_000, 155_000, 'y'));
    r.enqueue(passGap('M', 160_000, 185_000, 'm2'));
    await r.idle();
    expect(urls.map((u) => new URL(u).pathname)).toEqual(['/X', '/M', '/Y']);
    expect(emitted.map((batch) => batch.map((t) => t.tradeId))).toEqual([['t110000', 't120000', 't170000', 't180000'], ['t140000', 't150000']]);
    expect(reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, x.state, x.recovered])).toEqual([
      ['busy', 'recovered', 0], ['m1', 'recovered', 2], ['m2', 'recovered', 2], ['y', 'recovered', 2],
    ]);
  });

  it('a venue with a bounded reach pages each gap on its own, and says which ones it could not reach back to', async () => {
    // Near each other (old ends 75 s before reached starts). now is 1 000 s: a start more than 650 s ago (300 s) is beyond reach.
    const { starts, ended } = await passesOverM([passGap('M', 400_000, 425_000, 'reached'), passGap('M', 300_000, 325_000, 'old')], passVenue(), { reachMs: 650_000 });
    expect(starts).toEqual([400_000, 300_000]);
    expect(ended).toEqual({ reached: ['recovered', 2, undefined], old: ['partly_recovered', 2, 'beyond_rest_reach'] });
  });

  it('a venue that refuses the first page of a pass: every gap of it unrecoverable, refused', async () => {
    const { ended } = await passesOverM([passGap('M', 100_000, 125_000, 'a'), passGap('M', 200_000, 225_000, 'b')], { ...passVenue(), refuseAfter: 1 }, {}, { attempts: 2 });
    expect(ended).toEqual({ a: ['unrecoverable', 0, 'venue_refused'], b: ['unrecoverable', 0, 'venue_refused'] });
  });
});

describe('which queued gaps share a pass, numbered and by time: each by its own bounds, the pass from the earliest start to the latest end', () => {
  it('numbered gaps starting in the same millisecond, queued in either order (a restart reads them in any order): the pass starts at the lower number', async () => {
    // Trades 1 to 12 in one millisecond; 6 and 8 missed live.
    const at = (seq: number) => ({ ts: 999_000, seq, tradeId: `t${seq}` });
    const first: FoundGap = { symbol: 'M', cause: 'sequence', gapId: 'first', after: at(5), until: at(7), missing: { first: 6, last: 6 } };
    const second: FoundGap = { symbol: 'M', cause: 'sequence', gapId: 'second', after: at(7), until: at(9), missing: { first: 8, last: 8 } };
    for (const queued of [[second, first], [first, second]]) {
      const model: ModelVenue = { trades: Array.from({ length: 12 }, (_, i) => trade(i + 1, 999_000)), pageSize: 100 };
      const { rule, getJson, urls } = modelRule(model, 'sequential');
      const { r, reports } = recovery(rule, getJson);
      r.enqueue({ ...seqGap(1, 2), symbol: 'X' });
      for (const g of queued) r.enqueue(g);
      await r.idle();
      expect(urls.filter((u) => u.includes('/M?')).map((u) => new URL(u).searchParams.get('seq'))).toEqual(['5']);
      const ended = Object.fromEntries(reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, [x.state, x.recovered, x.absent, x.reason]]));
      expect(ended).toMatchObject({ first: ['recovered', 1, 0, undefined], second: ['recovered', 1, 0, undefined] });
    }
  });

  it('gaps from a time to a numbered trade, numbered, then to a time, ending in one millisecond, queued in either order: the pass takes that whole millisecond', async () => {
    // Trades 1 and 2 at 998.5 s, 3 to 12 in one millisecond. The market was watched from 998 s (no trade
    // known); 3 and 6 came live, and the stream was closed quiet at that millisecond after 6.
    const ts = 999_000;
    const at = (seq: number) => ({ ts, seq, tradeId: `t${seq}` });
    const timed: FoundGap = { symbol: 'M', cause: 'reconnect', gapId: 'timed', after: { ts: 998_000 }, until: at(3) };
    const numbered: FoundGap = { symbol: 'M', cause: 'sequence', gapId: 'numbered', after: at(3), until: at(6), missing: { first: 4, last: 5 } };
    const closed: FoundGap = { symbol: 'M', cause: 'reconnect', gapId: 'closed', after: at(6), until: { ts } };
    for (const queued of [[timed, numbered, closed], [closed, numbered, timed]]) {
      const model: ModelVenue = { trades: Array.from({ length: 12 }, (_, i) => trade(i + 1, i < 2 ? 998_500 : ts)), pageSize: 100 };
      const { rule, getJson, urls } = modelRule(model, 'sequential');
      const { r, reports } = recovery(rule, getJson);
      r.enqueue({ ...seqGap(1, 2), symbol: 'X' });
      for (const g of queued) r.enqueue(g);
      await r.idle();
      expect(urls.filter((u) => u.includes('/M?'))).toHaveLength(1);
      const ended = Object.fromEntries(reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, [x.state, x.recovered, x.absent, x.reason]]));
      expect(ended).toMatchObject({ timed: ['recovered', 2, undefined, undefined], numbered: ['recovered', 2, 0, undefined], closed: ['recovered', 6, undefined, undefined] });
    }
  });

  it('a gap closed at a time, a numbered one, and one from a time, queued in either order: the pass runs from the earliest start by time to the latest end by time', async () => {
    // Trade n at 999 000 + 100 (n - 1) ms. closed: after 3, closed at 999.45 s; numbered: 9 to 11 missing; timed: from 1 000.25 s to 16.
    const at = (seq: number) => ({ ts: 999_000 + 100 * (seq - 1), seq, tradeId: `t${seq}` });
    const closed: FoundGap = { symbol: 'M', cause: 'reconnect', gapId: 'closed', after: at(3), until: { ts: 999_450 } };
    const numbered: FoundGap = { symbol: 'M', cause: 'sequence', gapId: 'numbered', after: at(8), until: at(12), missing: { first: 9, last: 11 } };
    const timed: FoundGap = { symbol: 'M', cause: 'reconnect', gapId: 'timed', after: { ts: 1_000_250 }, until: at(16) };
    for (const queued of [[closed, numbered, timed], [timed, numbered, closed]]) {
      const model: ModelVenue = { trades: Array.from({ length: 20 }, (_, i) => trade(i + 1, 999_000 + 100 * i)), pageSize: 100 };
      const { rule, getJson, urls } = modelRule(model, 'sequential');
      const { r, reports } = recovery(rule, getJson);
      r.enqueue({ ...seqGap(1, 2), symbol: 'X' });
      for (const g of queued) r.enqueue(g);
      await r.idle();
      expect(urls.filter((u) => u.includes('/M?')).map((u) => new URL(u).searchParams.get('seq'))).toEqual(['3']);
      const ended = Object.fromEntries(reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, [x.state, x.recovered, x.absent]]));
      expect(ended).toMatchObject({ closed: ['recovered', 2, undefined], numbered: ['recovered', 3, 0], timed: ['recovered', 2, undefined] });
    }
  });

  it('numbered gaps in one pass keep a trade that fills the last missing number and the first live one', async () => {
    // 14 is an aggregated trade of two fills, 13 and 14: the second gap misses 11 to 13, and 14 came live.
    const model: ModelVenue = { trades: [...Array.from({ length: 12 }, (_, i) => trade(i + 1, 999_000 + i)), { ...trade(14, 999_013), fills: 2 }, trade(15, 999_014)], pageSize: 100 };
    const { rule, getJson } = modelRule(model, 'sequential');
    const { r, reports } = recovery(rule, getJson);
    r.enqueue({ ...seqGap(1, 2), symbol: 'X' });
    r.enqueue({ ...seqGap(3, 6, 999_002), gapId: 'a' });
    r.enqueue({ ...seqGap(10, 14, 999_009), gapId: 'b' });
    await r.idle();
    const ended = Object.fromEntries(reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, [x.state, x.recovered, x.absent, x.reason]]));
    expect(ended).toMatchObject({ a: ['recovered', 2, 0, undefined], b: ['recovered', 3, 0, undefined] });
  });

  it('a gap from a time (no numbered trade before it) and a numbered one of the same market share a pass, each by its own bounds', async () => {
    const model: ModelVenue = { trades: Array.from({ length: 40 }, (_, i) => trade(i + 1, 999_000 + i * 100)), pageSize: 100 };
    const { rule, getJson, urls } = modelRule(model, 'sequential');
    const { r, reports } = recovery(rule, getJson);
    r.enqueue({ ...seqGap(1, 2), symbol: 'X' });
    // From 999 150 ms (after trade 2) to trade 5; then numbers 11 to 14.
    r.enqueue({ symbol: 'M', cause: 'reconnect', gapId: 'timed', after: { ts: 999_150 }, until: { ts: 999_400, seq: 5, tradeId: 't5' } });
    r.enqueue({ ...seqGap(10, 15, 999_900), gapId: 'numbered' });
    await r.idle();
    expect(urls.filter((u) => u.includes('/M?'))).toHaveLength(1);
    const ended = Object.fromEntries(reports.filter((x) => x.state !== 'open').map((x) => [x.gapId, [x.state, x.recovered, x.missing]]));
    expect(ended).toMatchObject({ timed: ['recovered', 2, undefined], numbered: ['recovered', 4, 4] });
  });
});

describe('a venue whose integer ids rise with time (idsRise), its REST times coarser than the live ones', () => {
  it('places trades by id: those after the last known in the same second are taken, the first live one and later ones are not', async () => {
    // Times to the second, as Bitstamp's REST gives them; the bounds are live trades with millisecond times.
    const second = 999_000;
    const venue: ModelVenue = { trades: [104, 105, 106, 107, 108, 109, 110].map((id) => trade(undefined, second, String(id))), pageSize: 10, everything: true };
    const { rule, getJson } = modelRule(venue, 'time');
    const gap: FoundGap = { symbol: 'M', cause: 'reconnect', after: { ts: second + 734, tradeId: '105' }, until: { ts: second + 990, tradeId: '109' } };
    const byId = recovery({ ...rule, idsRise: true }, getJson);
    byId.r.enqueue(gap);
    await byId.r.idle();
    expect(byId.emitted.flat().map((t) => t.tradeId)).toEqual(['106', '107', '108']);
    expect(byId.reports.at(-1)).toEqual(expect.objectContaining({ state: 'recovered', recovered: 3 }));
    // By time alone, every trade of that second would be before the last one known: none recovered.
    const byTime = recovery(rule, getJson);
    byTime.r.enqueue(gap);
    await byTime.r.idle();
    expect(byTime.emitted).toEqual([]);
  });
});

describe('a history whose times are coarser than the live ones (timeResolutionMs)', () => {
  it('a trade of the start bound\'s own second is after a start without an id (a market watched from its subscription)', async () => {
    const second = 999_000;
    const venue: ModelVenue = { trades: [trade(undefined, second - 1_000, 'old'), trade(undefined, second, 'same'), trade(undefined, second + 1_000, 'next')], pageSize: 10, everything: true };
    const { rule, getJson } = modelRule(venue, 'time', { timeResolutionMs: 1_000 });
    const gap: FoundGap = { symbol: 'M', cause: 'reconnect', after: { ts: second + 874 }, until: { ts: second + 2_500 } };
    const coarse = recovery(rule, getJson);
    coarse.r.enqueue(gap);
    await coarse.r.idle();
    expect(coarse.emitted.flat().map((t) => t.tradeId)).toEqual(['same', 'next']);
    // At the live times' resolution the trade of that second looks older than the start.
    const exact = recovery({ ...rule, rest: { ...rule.rest!, timeResolutionMs: 1 } }, getJson);
    exact.r.enqueue(gap);
    await exact.r.idle();
    expect(exact.emitted.flat().map((t) => t.tradeId)).toEqual(['next']);
  });
});

describe('two gaps of a market meeting where the first was closed at a time (a quiet market, TradeGaps.due)', () => {
  // Bitstamp's way: integer ids rising with time, history times in whole seconds. The first gap is
  // closed at second + 500 for want of a live trade; the next runs from that time to the first
  // live trade. Trades printed in that second show the second's start in the history.
  const second = 999_000;
  const id = (n: number) => String(n);
  const gaps = () => ({
    first: { symbol: 'M', cause: 'reconnect', after: { ts: second - 3_000, tradeId: id(99) }, until: { ts: second + 500 } } satisfies FoundGap,
    next: { symbol: 'M', cause: 'reconnect', after: { ts: second + 500 }, until: { ts: second + 2_000, tradeId: id(103) } } satisfies FoundGap,
  });

  it('each trade of the seam\'s second is handed on once: the next gap skips those the first handed on, and takes one printed after its pages', async () => {
    const venue: ModelVenue = { trades: [trade(undefined, second - 2_000, id(100)), trade(undefined, second, id(101))], pageSize: 10, everything: true };
    const { rule, getJson } = modelRule(venue, 'time', { timeResolutionMs: 1_000 });
    const { r, emitted, reports } = recovery({ ...rule, idsRise: true }, getJson);
    const { first, next } = gaps();
    r.enqueue(first);
    await r.idle();
    // Printed at second + 600, after the first gap's pages: shown at the second's start.
    venue.trades.push(trade(undefined, second, id(102)), trade(undefined, second + 2_000, id(103)));
    r.enqueue(next);
    await r.idle();
    expect(emitted.map((page) => page.map((t) => t.tradeId))).toEqual([[id(100), id(101)], [id(102)]]);
    expect(reports.filter((x) => x.state !== 'open').map((x) => [x.state, x.recovered])).toEqual([['recovered', 2], ['recovered', 1]]);
  });

  it('a live trade that came late for a gap (printed before its end, delivered after) is not handed on by it, unless the bus refused trades of the market since', async () => {
    const handedBy = async (refusedSince: boolean) => {
      const venue: ModelVenue = { trades: [trade(undefined, second - 2_000, id(100)), trade(undefined, second, id(101))], pageSize: 10, everything: true };
      const { rule, getJson } = modelRule(venue, 'time', { timeResolutionMs: 1_000 });
      const { r, emitted } = recovery({ ...rule, idsRise: true }, getJson);
      expect(r.deliveredLive(trade(undefined, second, id(101)))).toBe(true);
      if (refusedSince) r.refused('M');
      r.enqueue(gaps().first);
      await r.idle();
      return emitted.map((page) => page.map((t) => t.tradeId));
    };
    expect(await handedBy(false)).toEqual([[id(100)]]);
    // The refused trades may be that one: the gap the refusal opens must hand it on.
    expect(await handedBy(true)).toEqual([[id(100), id(101)]]);
  });

  it('a live trade late for a gap queued behind an earlier gap of its market: the earlier one ending does not forget it', async () => {
    const venue: ModelVenue = { trades: [trade(undefined, second - 400_000, id(90)), trade(undefined, second - 2_000, id(100)), trade(undefined, second, id(101))], pageSize: 10, everything: true };
    const { rule, getJson } = modelRule(venue, 'time', { timeResolutionMs: 1_000 });
    const { r, emitted } = recovery({ ...rule, idsRise: true }, getJson);
    // Another market's gap keeps the drain busy while the market's two gaps queue (far apart: two passes).
    r.enqueue({ symbol: 'X', cause: 'reconnect', after: { ts: 0, tradeId: id(1) }, until: { ts: 1, tradeId: id(2) } });
    r.enqueue({ symbol: 'M', cause: 'reconnect', after: { ts: second - 500_000, tradeId: id(89) }, until: { ts: second - 300_000, tradeId: id(91) } });
    r.enqueue(gaps().first);
    expect(r.deliveredLive(trade(undefined, second, id(101)))).toBe(true);
    await r.idle();
    expect(emitted.filter((page) => page[0]!.symbol === 'M').map((page) => page.map((t) => t.tradeId))).toEqual([[id(90)], [id(100)]]);
  });

  it('trades of the market refused by the bus since: the next gap hands them on again (they may be the refused ones)', async () => {
    // A history whose times are finer than the resolution its rule states: 101 shows second + 300.
    const venue: ModelVenue = { trades: [trade(undefined, second + 300, id(101)), trade(undefined, second + 2_000, id(103))], pageSize: 10, everything: true };
    const { rule, getJson } = modelRule(venue, 'time', { timeResolutionMs: 1_000 });
    const { r, emitted } = recovery({ ...rule, idsRise: true }, getJson);
    const { first, next } = gaps();
    r.enqueue(first);
    await r.idle();
    r.refused('M');
    // The gap the refusal opens starts a millisecond before the refused trade, with no id: in the seam's second.
    r.enqueue({ ...next, cause: 'overload', after: { ts: second + 299 } });
    await r.idle();
    expect(emitted.map((page) => page.map((t) => t.tradeId))).toEqual([[id(101)], [id(101)]]);
  });

  it('a gap from another second, or from a trade, is not touched by the seam: it hands on what it finds', async () => {
    const afterFirst = async (other: FoundGap) => {
      const venue: ModelVenue = { trades: [trade(undefined, second, id(101)), trade(undefined, second + 1_000, id(102)), trade(undefined, second + 2_000, id(103))], pageSize: 10, everything: true };
      const { rule, getJson } = modelRule(venue, 'time', { timeResolutionMs: 1_000 });
      const { r, emitted } = recovery({ ...rule, idsRise: true }, getJson);
      r.enqueue(gaps().first);
      await r.idle();
      r.enqueue(other);
      await r.idle();
      return emitted.map((page) => page.map((t) => t.tradeId));
    };
    const until = { ts: second + 2_000, tradeId: id(103) };
    expect(await afterFirst({ symbol: 'M', cause: 'reconnect', after: { ts: second + 1_200 }, until })).toEqual([[id(101)], [id(102)]]);
    expect(await afterFirst({ symbol: 'M', cause: 'reconnect', after: { ts: second - 2_000, tradeId: id(100) }, until })).toEqual([[id(101)], [id(101), id(102)]]);
    // From an earlier second with no id (a gap a previous run left): not the seam's continuation, 101 again.
    expect(await afterFirst({ symbol: 'M', cause: 'restart', after: { ts: second - 1_500 }, until })).toEqual([[id(101)], [id(101), id(102)]]);
    // The seam is the first gap's market's: another market's gap from that very time takes its second whole.
    expect(await afterFirst({ symbol: 'N', cause: 'reconnect', after: { ts: second + 500 }, until })).toEqual([[id(101)], [id(101), id(102)]]);
  });

  it('only the market\'s last gap leaves a seam, and only a gap closed at a time; a pass over several gaps leaves its last one\'s', async () => {
    const run = async (steps: FoundGap[][]) => {
      const venue: ModelVenue = { trades: [trade(undefined, second - 2_000, id(100)), trade(undefined, second, id(101)), trade(undefined, second, id(102)), trade(undefined, second + 2_000, id(103))], pageSize: 10, everything: true };
      const { rule, getJson } = modelRule(venue, 'time', { timeResolutionMs: 1_000 });
      const { r, emitted } = recovery({ ...rule, idsRise: true }, getJson);
      for (const step of steps) {
        // Another market's gap first: the drain is busy with it while the step's gaps queue up together.
        r.enqueue({ symbol: 'X', cause: 'reconnect', after: { ts: 0, tradeId: id(1) }, until: { ts: 1, tradeId: id(2) } });
        for (const g of step) r.enqueue(g);
        await r.idle();
      }
      return emitted.filter((page) => page[0]!.symbol === 'M').map((page) => page.map((t) => t.tradeId));
    };
    const fromSeam: FoundGap = { symbol: 'M', cause: 'reconnect', after: { ts: second + 500 }, until: { ts: second + 2_000, tradeId: id(103) } };
    const { first } = gaps();
    // A gap between the closed one and the one from its time (here ending at the live trade 102): the seam is gone.
    const between: FoundGap = { symbol: 'M', cause: 'sequence', after: { ts: second, tradeId: id(101) }, until: { ts: second, tradeId: id(102) } };
    expect(await run([[first], [between], [fromSeam]])).toEqual([[id(100), id(101), id(102)], [id(101), id(102)]]);
    // A gap ending at a live trade leaves no seam, though a gap then starts from a time of its second.
    const toTrade: FoundGap = { ...first, until: { ts: second + 500, tradeId: id(103) } };
    expect(await run([[toTrade], [fromSeam]])).toEqual([[id(100), id(101), id(102)], [id(101), id(102)]]);
    // Two gaps in one pass, the last closed at a time: its second's trades are not handed on again.
    const before: FoundGap = { symbol: 'M', cause: 'reconnect', after: { ts: second - 4_000, tradeId: id(97) }, until: { ts: second - 3_500, tradeId: id(98) } };
    expect(await run([[before, first], [fromSeam]])).toEqual([[id(100), id(101), id(102)]]);
    // From a trade of the seam's own second: ids after it are taken, the seam is not the start.
    expect(await run([[first], [{ ...fromSeam, after: { ts: second + 300, tradeId: id(101) } }]])).toEqual([[id(100), id(101), id(102)], [id(102)]]);
  });
});

// The recovery loop against a model venue: a list of trades served by pages from a cursor, as a
// venue's REST history does, through a rule whose url carries the cursor and whose parse reads it
// back. No sockets: the venue is a function, the clock a counter.
import { describe, expect, it } from 'vitest';
import { silentLog } from '../../test/support/harness.ts';
import { HistoryRecovery, type GapReport, type HistoryRecoveryOptions } from '../historyRecovery.ts';
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

// The REST trade history of Bybit (spot, linear), Bitstamp, Bitfinex (exchange, derivatives),
// KuCoin and BitMEX against the simulator, which answers from every trade it printed: paged with
// each venue descriptor's `history.rest` (url, parse) from a cursor, a venue gives exactly the
// printed trades after it within its depth, in order, none twice; it refuses past its rate limit
// in its own words; and a trade read from its REST history is the trade its websocket sent.
import { afterEach, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import type { SimTrade } from '../../simulator/market.ts';
import { RestRateLimit } from '../../simulator/printedTrades.ts';
import { startSimulator, type SimulatedVenueId, type Simulator } from '../../simulator/simulator.ts';
import type { SimVenueServer } from '../../simulator/venueServer.ts';
import { until } from '../../test/support/until.ts';
import { selectMarkets, toTradeEvent } from '../normalize.ts';
import type { HistoryCursor, TradeMessage, VenueDescriptor, VenueEndpoints, VenueMarket } from '../venue.ts';
import { venueIo } from '../venueIo.ts';
import { findNativeVenue } from '../venues/registry.ts';

interface HistoryCase {
  id: SimulatedVenueId;
  /** The market paged (BTC's, on every venue). */
  symbol: string;
  /** Printed trades to page through: `perSecond` a market over `spanMs` before now, in model steps of `stepMs` (none in `quiet`, ms before now). */
  printing: { spanMs: number; stepMs: number; perSecond: number; quiet?: { from: number; to: number } };
  /** How deep the history goes: the latest N trades, the last `ms`, or all (the simulator's bound). */
  depth: { latest: number } | { ms: number } | 'all';
  /** The paging test's first cursor, past a page or past the depth: so many printed trades before the last, or the last trade older than so many ms. */
  deepCursor: { after: number } | { olderThanMs: number };
  /** Trade ids that rise with time (numbers): the cursor is passed by id. Otherwise by time, then page order. */
  idsRise: boolean;
  /** The REST time's resolution: Bitstamp's `date` is whole seconds. */
  resolutionMs: number;
  /** The venue's count parameter: a page of `default` trades without it, of `max` at most (a larger count served at the maximum). */
  pageBounds?: { url: (rest: string, symbol: string, count?: number) => string; max: number; default: number };
  /** The venue's documented limits (see its venue file), and its refusal past them. */
  limits: readonly { limit: number; windowMs: number }[];
  refusal: { status: number; body: unknown };
}

const minute = 60_000;
const day = 86_400_000;
const fast = { spanMs: minute, stepMs: 100, perSecond: 30 };
const count = (name: string, n: number | undefined) => (n === undefined ? '' : `&${name}=${n}`);
const bybitRecent = (category: string) => (rest: string, symbol: string, n?: number) => `${rest}/v5/market/recent-trade?category=${category}&symbol=${symbol}${count('limit', n)}`;
/** Bybit's IP limit (600 requests in 5 s), its answer past it. */
const bybitLimit = { limits: [{ limit: 600, windowMs: 5_000 }], refusal: { status: 403, body: 'access too frequent' } };

const cases: HistoryCase[] = [
  { id: 'bybit', symbol: 'BTCUSDT', printing: fast, depth: { latest: 60 }, deepCursor: { after: 200 }, idsRise: true, resolutionMs: 1, pageBounds: { url: bybitRecent('spot'), max: 60, default: 60 }, ...bybitLimit },
  {
    id: 'bybit-linear',
    symbol: 'BTCUSDT',
    printing: fast,
    depth: { latest: 1_000 },
    deepCursor: { after: 1_200 },
    idsRise: false,
    resolutionMs: 1,
    pageBounds: { url: bybitRecent('linear'), max: 1_000, default: 500 },
    ...bybitLimit,
  },
  {
    id: 'bitstamp',
    symbol: 'btcusd',
    // A day and an hour of trades, none within 10 minutes of the 24 h bound (the test's clock and the venue's differ a little).
    printing: { spanMs: day + 60 * minute, stepMs: 10 * minute, perSecond: 1 / 30, quiet: { from: day + 10 * minute, to: day - 10 * minute } },
    depth: { ms: day },
    deepCursor: { olderThanMs: day + 30 * minute },
    idsRise: true,
    resolutionMs: 1_000,
    limits: [
      { limit: 400, windowMs: 1_000 },
      { limit: 10_000, windowMs: 600_000 },
    ],
    refusal: { status: 400, body: { response_code: '400.002', response_explanation: 'Request rejected due to exceeded rate limit.' } },
  },
  ...(['bitfinex', 'bitfinex-derivatives'] as const).map(
    (id): HistoryCase => ({
      id,
      symbol: id === 'bitfinex' ? 'tBTCUSD' : 'tBTCF0:USTF0',
      printing: { spanMs: 2 * minute, stepMs: 100, perSecond: 120 },
      depth: 'all',
      // Past one page of 10,000.
      deepCursor: { after: 12_000 },
      idsRise: true,
      resolutionMs: 1,
      pageBounds: { url: (rest, symbol, n) => `${rest}/v2/trades/${encodeURIComponent(symbol)}/hist?sort=-1${count('limit', n)}`, max: 10_000, default: 125 },
      limits: [{ limit: 15, windowMs: 60_000 }],
      refusal: { status: 429, body: ['error', 11010, 'ratelimit: error'] },
    }),
  ),
  {
    id: 'kucoin',
    symbol: 'BTC-USDT',
    printing: fast,
    depth: { latest: 100 },
    deepCursor: { after: 300 },
    idsRise: true,
    resolutionMs: 1,
    // 2,000 weight per 30 s, histories weighing 3.
    limits: [{ limit: 666, windowMs: 30_000 }],
    refusal: { status: 429, body: { code: '429000', msg: 'Too Many Requests' } },
  },
  {
    id: 'bitmex',
    symbol: 'XBTUSD',
    printing: { spanMs: minute, stepMs: 100, perSecond: 60 },
    depth: 'all',
    // Past two pages of 1000.
    deepCursor: { after: 2_500 },
    idsRise: false,
    resolutionMs: 1,
    pageBounds: { url: (rest, symbol, n) => `${rest}/api/v1/trade?symbol=${symbol}${count('count', n)}`, max: 1_000, default: 100 },
    limits: [{ limit: 30, windowMs: 60_000 }],
    refusal: { status: 429, body: { error: { message: 'Rate limit exceeded, retry in 1 seconds.', name: 'RateLimitError' } } },
  },
];

let running: { sim: Simulator; sockets: WebSocket[] }[] = [];
afterEach(async () => {
  for (const { sim, sockets } of running) {
    for (const s of sockets) s.terminate();
    await sim.close();
  }
  running = [];
});

interface Venue {
  sim: Simulator;
  server: SimVenueServer;
  endpoints: VenueEndpoints;
  descriptor: VenueDescriptor;
  rest: NonNullable<NonNullable<VenueDescriptor['history']>['rest']>;
  market: VenueMarket;
  sockets: WebSocket[];
}

/** The simulated venue, still: its market model moves only when the test steps it. */
async function start(c: HistoryCase, perSecond: number): Promise<Venue> {
  const descriptor = findNativeVenue(c.id)!;
  // The model steps when told; its own ticker is set beyond any test's length.
  const sim = await startSimulator({ seed: 5, venues: [c.id], tickers: ['BTC'], tradesPerSecondPerMarket: perSecond, tickMs: 2_000_000_000 });
  const sockets: WebSocket[] = [];
  running.push({ sim, sockets });
  const endpoints = sim.endpoints(c.id);
  const { markets } = selectMarkets(descriptor, await descriptor.listMarkets(venueIo, endpoints));
  const market = markets.find((m) => m.symbol === c.symbol);
  if (!market) throw new Error(`${c.id}: ${c.symbol} is not among the markets followed`);
  return { sim, server: sim.venue(c.id), endpoints, descriptor, rest: descriptor.history!.rest!, market, sockets };
}

/** Steps the market model from `from` to `to` (unix ms), `stepMs` at a time: the trades of each step are printed then, none in `quiet`. */
function print(server: SimVenueServer, from: number, to: number, stepMs: number, quiet?: { from: number; to: number }): void {
  for (let t = from; t < to; t += stepMs) {
    const end = Math.min(to, t + stepMs);
    if (!quiet || end <= quiet.from || t >= quiet.to) server.tick(t + 1, end);
  }
}

const significant = (n: number) => Number(n.toPrecision(12));

/** What a printed trade must come back as, from the simulator's own record (not from any parse). */
function expected(c: HistoryCase, market: VenueMarket, t: SimTrade) {
  const qty = Number(t.qty) * Number(market.contractSize);
  return { tradeId: String(t.id), price: Number(t.price), quantity: significant(market.inverse ? qty / Number(t.price) : qty), side: t.side, ts: Math.floor(t.time / c.resolutionMs) * c.resolutionMs };
}

function asEvent(c: HistoryCase, market: VenueMarket, t: TradeMessage) {
  const e = toTradeEvent(c.id, market, t, 0)!;
  return { tradeId: e.tradeId, price: e.price, quantity: significant(e.quantity), side: e.side, ts: e.ts };
}

/** A page oldest first: a venue that lists newest first (Bybit, Bitstamp) is read backwards. */
const chronological = (trades: readonly TradeMessage[]) => (trades.length > 1 && trades[0]!.ts > trades.at(-1)!.ts ? [...trades].reverse() : [...trades]);

/**
 * The trades of a page after the cursor, and whether the page reached back to it. By id where the
 * venue's ids rise; else by time, and within the cursor's millisecond by the page's order.
 */
function afterCursor(c: HistoryCase, page: readonly TradeMessage[], cursor: HistoryCursor): { after: TradeMessage[]; reached: boolean } {
  const trades = chronological(page);
  if (c.idsRise) {
    const id = BigInt(cursor.tradeId!);
    return { after: trades.filter((t) => BigInt(t.tradeId) > id), reached: trades.some((t) => BigInt(t.tradeId) <= id) };
  }
  const at = trades.findIndex((t) => t.tradeId === cursor.tradeId);
  return { after: trades.filter((t, i) => t.ts > cursor.ts || (t.ts === cursor.ts && i > at)), reached: trades.some((t) => t.ts <= cursor.ts) };
}

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

/** Pages the venue's history from `cursor` with its descriptor, as a recovery does: until a page says there is no more. */
async function page(c: HistoryCase, v: Venue, cursor: HistoryCursor) {
  const trades: TradeMessage[] = [];
  let reachedCursor: boolean | undefined;
  let at = cursor;
  const statuses: number[] = [];
  for (;;) {
    const answer = await get(v.rest.url(v.endpoints.rest, c.symbol, at));
    statuses.push(answer.status);
    const parsed = v.rest.parse(answer.body, c.symbol);
    if (!parsed) throw new Error(`${c.id}: page not understood (HTTP ${answer.status}): ${JSON.stringify(answer.body).slice(0, 200)}`);
    const { after, reached } = afterCursor(c, parsed.trades, at);
    reachedCursor ??= reached;
    trades.push(...after);
    if (!parsed.more || after.length === 0) return { trades, reachedCursor, statuses };
    const last = after.at(-1)!;
    at = { ts: last.ts, tradeId: last.tradeId };
  }
}

/** The printed trades the venue's history still holds after printed trade `i`. */
function heldAfter(c: HistoryCase, printed: readonly SimTrade[], i: number, now: number): SimTrade[] {
  const after = printed.slice(i + 1);
  if (c.depth === 'all') return after;
  if ('latest' in c.depth) return after.slice(-c.depth.latest);
  const from = now - c.depth.ms;
  return after.filter((t) => t.time >= from);
}

const cursorOf = (t: SimTrade, c: HistoryCase): HistoryCursor => ({ ts: Math.floor(t.time / c.resolutionMs) * c.resolutionMs, tradeId: String(t.id) });

describe.each(cases.map((c) => [c.id, c] as const))('%s REST trade history against the simulated venue', (_id, c) => {
  test('from a cursor: exactly the printed trades after it, in order, none twice, as far back as the venue reaches', { timeout: 120_000 }, async () => {
    const v = await start(c, c.printing.perSecond);
    const now = Date.now();
    const { quiet } = c.printing;
    print(v.server, now - c.printing.spanMs, now, c.printing.stepMs, quiet && { from: now - quiet.from, to: now - quiet.to });
    const printed = v.server.printed.of(c.symbol);
    const deep = 'after' in c.deepCursor ? printed.length - 1 - c.deepCursor.after : printed.findLastIndex((t) => t.time < now - (c.deepCursor as { olderThanMs: number }).olderThanMs);
    expect(deep).toBeGreaterThan(0);
    const afterDeep = printed.length - 1 - deep;

    // A cursor further back than one page, or than the venue's depth.
    const fromDeep = await page(c, v, cursorOf(printed[deep]!, c));
    const held = heldAfter(c, printed, deep, now);
    expect(fromDeep.trades.map((t) => asEvent(c, v.market, t))).toEqual(held.map((t) => expected(c, v.market, t)));
    expect(new Set(fromDeep.trades.map((t) => t.tradeId)).size).toBe(fromDeep.trades.length);
    if (c.depth === 'all') {
      // Every printed trade after the cursor, over more than one page.
      expect(held).toHaveLength(afterDeep);
      expect(fromDeep.statuses.length).toBeGreaterThan(1);
      expect(fromDeep.reachedCursor).toBe(true);
    } else {
      // The venue's depth: the trades older than it are gone, and the page says so (it does not reach back to the cursor).
      expect(held.length).toBeLessThan(afterDeep);
      expect(fromDeep.statuses).toHaveLength(1);
      expect(fromDeep.reachedCursor).toBe(false);
    }

    // A cursor within the depth: every trade after it, the page reaching back to it.
    const recent = printed.length - 1 - Math.min(40, Math.floor(held.length / 2));
    const fromRecent = await page(c, v, cursorOf(printed[recent]!, c));
    expect(fromRecent.trades.map((t) => asEvent(c, v.market, t))).toEqual(printed.slice(recent + 1).map((t) => expected(c, v.market, t)));
    expect(fromRecent.reachedCursor).toBe(true);
    expect([...fromDeep.statuses, ...fromRecent.statuses].every((s) => s === 200)).toBe(true);

    // The venue's page: its default size without a count, its maximum for a larger one.
    if (c.pageBounds) {
      const { url, max } = c.pageBounds;
      const sizes = await Promise.all([undefined, max + 1].map(async (n) => v.rest.parse((await get(url(v.endpoints.rest, c.symbol, n))).body, c.symbol)?.trades.length));
      expect(sizes).toEqual([c.pageBounds.default, max]);
    }
  });

  test('a trade from the REST history is the trade the websocket sent: same id, price, base quantity, side and time', async () => {
    const v = await start(c, 20);
    const received: TradeMessage[] = [];
    const [plan] = v.descriptor.sockets(v.endpoints, [v.market]);
    const url = plan!.connectUrl ? (await plan!.connectUrl(venueIo)).url : plan!.url;
    const session = v.descriptor.session?.() ?? { parse: v.descriptor.parse };
    const socket = new WebSocket(url);
    v.sockets.push(socket);
    socket.on('message', (data) => received.push(...session.parse(data.toString()).filter((m): m is TradeMessage => m.kind === 'trade' && m.symbol === c.symbol)));
    await new Promise<void>((resolve, reject) => socket.once('open', resolve).once('error', reject));
    for (const m of plan!.subscribe) socket.send(m);
    const subscribed = () => [...v.server.clients].some((client) => [...client.topics].some((topic) => topic.includes(c.symbol) && /trade|match/i.test(topic)));
    await until(subscribed, `${c.id}: the trade subscription`);

    const from = Date.now() - 2_000;
    print(v.server, from, from + 2_000, 100);
    const sent = v.server.printed.of(c.symbol);
    expect(sent.length).toBeGreaterThan(10);
    await until(() => received.length >= sent.length, `${c.id}: the ${sent.length} trades on the websocket`, { context: () => `${received.length} received` });

    const history = await page(c, v, { ts: from - 1_000, tradeId: '0' });
    const fromRest = new Map(history.trades.map((t) => [t.tradeId, asEvent(c, v.market, t)]));
    const fromWs = received.map((t) => asEvent(c, v.market, t));
    expect(fromWs).toHaveLength(sent.length);
    if (c.resolutionMs === 1) expect(fromWs.map((t) => fromRest.get(t.tradeId))).toEqual(fromWs);
    // Bitstamp's REST time is the websocket's cut to its second; all else is the same.
    else expect(fromWs.map((t) => fromRest.get(t.tradeId))).toEqual(fromWs.map((t) => ({ ...t, ts: Math.floor(t.ts / 1_000) * 1_000 })));
  });

  test("paced at the descriptor's rate the venue never refuses; past its limit it refuses in its own words", { timeout: 60_000 }, async () => {
    const rest = findNativeVenue(c.id)!.history!.rest!;
    // Requests at the recovery's pace, on a clock of their own, through the limits the simulated venue applies.
    for (const l of c.limits) {
      const limit = new RestRateLimit(l.limit, l.windowMs);
      const spacing = 1_000 / rest.requestsPerSecond;
      const accepted = Array.from({ length: 3 * l.limit }, (_, k) => limit.take(k * spacing));
      expect(accepted.every(Boolean)).toBe(true);
    }

    const v = await start(c, 5);
    const now = Date.now();
    print(v.server, now - 5_000, now, 100);
    const url = v.rest.url(v.endpoints.rest, c.symbol, { ts: now - 5_000, tradeId: '0' });
    const tightest = c.limits.reduce((a, b) => (b.limit < a.limit ? b : a));
    // Past the limit at once: one request more, or (a one-second window, which a loaded machine's
    // burst may outlast) twice the limit.
    const burst = tightest.windowMs >= 5_000 ? tightest.limit + 1 : 2 * tightest.limit;
    const answers = await Promise.all(Array.from({ length: burst }, () => get(url)));
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const a of refused) expect(a).toEqual(c.refusal);
    // What the venue answered before refusing was history, as the descriptor reads it.
    expect(answers.filter((a) => a.status === 200).every((a) => v.rest.parse(a.body, c.symbol) !== undefined)).toBe(true);
    // A refusal is no page: the recovery retries it.
    expect(v.rest.parse(refused[0]!.body, c.symbol)).toBeUndefined();
  });
});

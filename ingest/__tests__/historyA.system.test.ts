// The REST trade history of Binance (spot, USD-M aggregate trades), OKX (spot, swap), Coinbase,
// Kraken, Deribit and Gate against the simulator, which answers from every trade it printed. Read
// with each descriptor's `history.rest` (url, parse) from a cursor, a venue gives exactly the
// printed trades after it, in order, none missing, none twice, at the descriptor's pace; a cursor
// older than the venue keeps shows where its history starts (or is refused, as Binance USD-M
// refuses); past its rate limit the venue refuses in the words of the recorded refusal; and a trade
// read from the REST history is the event its websocket message gives.
import { afterEach, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { binanceFuturesHistoryLimit } from '../../simulator/binanceFuturesServer.ts';
import { binanceHistoryLimit } from '../../simulator/binanceServer.ts';
import { coinbaseHistoryLimit } from '../../simulator/coinbaseServer.ts';
import { deribitHistoryLimit } from '../../simulator/deribitServer.ts';
import { gateHistoryLimit } from '../../simulator/gateServer.ts';
import { krakenHistoryLimit } from '../../simulator/krakenServer.ts';
import type { SimTrade } from '../../simulator/market.ts';
import { okxHistoryLimit } from '../../simulator/okxServer.ts';
import { RestRateLimit } from '../../simulator/printedTrades.ts';
import { startSimulator, type SimulatedVenueId, type Simulator } from '../../simulator/simulator.ts';
import type { SimVenueServer } from '../../simulator/venueServer.ts';
import { until } from '../../test/support/until.ts';
import { selectMarkets, toTradeEvent } from '../normalize.ts';
import type { HistoryCursor, TradeHistoryRule, TradeMessage, VenueDescriptor, VenueEndpoints, VenueMarket } from '../venue.ts';
import { venueIo } from '../venueIo.ts';
import { findNativeVenue } from '../venues/registry.ts';
import { fixture } from './fixtures.ts';

interface VenueCase {
  id: SimulatedVenueId;
  /** The market paged; Kraken's DOGE/USD goes by another name on REST (XDGUSD). */
  symbol: string;
  tickers: string[];
  /** The venue's page size: trades are printed a few pages deep. */
  pageSize: number;
  /** The venue's limit on its history endpoint as the simulator counts it. */
  limit: { limit: number; windowMs: number };
  /** Its refusal past the limit: the HTTP status, and the recorded body (the fixture of that name). */
  refusal: { status: number; fixture: string };
  /** Past what it keeps: the page starts at its oldest trade, or the venue refuses (Binance USD-M, with this fixture's body). */
  beyondReach: 'oldest' | { status: number; fixture: string };
}

const cases: VenueCase[] = [
  { id: 'binance', symbol: 'BTCUSDT', tickers: ['BTC'], pageSize: 1_000, limit: binanceHistoryLimit, refusal: { status: 429, fixture: 'binance/rest_rate_limited.json' }, beyondReach: 'oldest' },
  {
    id: 'binance-futures',
    symbol: 'BTCUSDT',
    tickers: ['BTC'],
    pageSize: 1_000,
    limit: binanceFuturesHistoryLimit,
    refusal: { status: 429, fixture: 'binance-futures/rest_rate_limited.json' },
    beyondReach: { status: 400, fixture: 'binance-futures/rest_search_window.json' },
  },
  { id: 'okx', symbol: 'BTC-USDT', tickers: ['BTC'], pageSize: 100, limit: okxHistoryLimit, refusal: { status: 429, fixture: 'okx/rest_rate_limited.json' }, beyondReach: 'oldest' },
  { id: 'okx-swap', symbol: 'BTC-USDT-SWAP', tickers: ['BTC'], pageSize: 100, limit: okxHistoryLimit, refusal: { status: 429, fixture: 'okx/rest_rate_limited.json' }, beyondReach: 'oldest' },
  { id: 'coinbase', symbol: 'BTC-USD', tickers: ['BTC'], pageSize: 1_000, limit: coinbaseHistoryLimit, refusal: { status: 429, fixture: 'coinbase/rest_rate_limited.json' }, beyondReach: 'oldest' },
  { id: 'kraken', symbol: 'DOGE/USD', tickers: ['DOGE'], pageSize: 1_000, limit: krakenHistoryLimit, refusal: { status: 200, fixture: 'kraken/rest_rate_limited.json' }, beyondReach: 'oldest' },
  // The linear perpetual; its liquidation trades are in the sequence too.
  { id: 'deribit', symbol: 'BTC_USDC-PERPETUAL', tickers: ['BTC'], pageSize: 1_000, limit: deribitHistoryLimit, refusal: { status: 429, fixture: 'deribit/rest_rate_limited.json' }, beyondReach: 'oldest' },
  { id: 'gate', symbol: 'BTC_USDT', tickers: ['BTC'], pageSize: 1_000, limit: gateHistoryLimit, refusal: { status: 429, fixture: 'gate/rest_rate_limited.json' }, beyondReach: 'oldest' },
];

/** A recorded body: `okx/rest_rate_limited.json` is that file of the okx fixtures. */
const fixtureBody = (path: string): unknown => {
  const [venue, name] = path.split('/');
  return fixture(venue!, name!);
};

type Rest = NonNullable<TradeHistoryRule['rest']>;

/** An answer as compared: Deribit stamps each answer with the request's times (usIn, usOut), so its refusal is its error. */
const comparable = (c: VenueCase, a: { status: number; body: unknown }) => (c.id === 'deribit' ? { status: a.status, error: (a.body as { error?: unknown }).error } : a);

interface Venue {
  sim: Simulator;
  server: SimVenueServer;
  endpoints: VenueEndpoints;
  descriptor: VenueDescriptor;
  rule: TradeHistoryRule;
  rest: Rest;
  market: VenueMarket;
}

const opened: { sim: Simulator; sockets: WebSocket[] }[] = [];
afterEach(async () => {
  for (const { sim, sockets } of opened.splice(0)) {
    for (const s of sockets) s.terminate();
    await sim.close();
  }
});

/** The venue alone, its model moved only by `printFor` (its own ticker set beyond any test's length). */
async function open(c: VenueCase, options: { perSecond: number; retainPrinted?: number }): Promise<Venue & { sockets: WebSocket[] }> {
  const sim = await startSimulator({
    seed: 9,
    venues: [c.id],
    tickers: c.tickers,
    tradesPerSecondPerMarket: options.perSecond,
    tickMs: 2_000_000_000,
    ...(options.retainPrinted ? { perVenue: { [c.id]: { retainPrinted: options.retainPrinted } } } : {}),
  });
  const sockets: WebSocket[] = [];
  opened.push({ sim, sockets });
  const descriptor = findNativeVenue(c.id)!;
  const endpoints = sim.endpoints(c.id);
  const market = selectMarkets(descriptor, await descriptor.listMarkets(venueIo, endpoints)).markets.find((m) => m.symbol === c.symbol);
  if (!market) throw new Error(`${c.id}: ${c.symbol} is not followed`);
  return { sim, server: sim.venue(c.id), endpoints, descriptor, rule: descriptor.history!, rest: descriptor.history!.rest!, market, sockets };
}

/** Runs the market model over the `ms` before now in 100 ms steps: the venue prints (and sends) each step's trades. */
function printFor(server: SimVenueServer, ms: number): void {
  const end = Date.now();
  for (let t = end - ms; t < end; t += 100) server.tick(t + 1, Math.min(end, t + 100));
}

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

/** Whether a trade comes after the cursor: by number where the venue numbers its trades, else by time then id (Gate's ids rise). */
function isAfter(t: TradeMessage, cursor: HistoryCursor): boolean {
  if (t.seq !== undefined && cursor.seq !== undefined) return t.seq > cursor.seq;
  return t.ts > cursor.ts || (t.ts === cursor.ts && Number(t.tradeId) > Number(cursor.tradeId));
}
const place = (a: TradeMessage, b: TradeMessage) => (a.seq !== undefined && b.seq !== undefined ? a.seq - b.seq : a.ts - b.ts || Number(a.tradeId) - Number(b.tradeId));

/** The cursor of a printed trade, as the collector would hold it: its number only where the venue numbers trades. */
const cursorAt = (v: Venue, t: Pick<SimTrade, 'id' | 'time'>): HistoryCursor => ({ ts: t.time, tradeId: String(t.id), ...(v.rule.continuity === 'sequential' ? { seq: t.id } : {}) });

/**
 * Pages the venue's history from `cursor` with the descriptor, one request every 1 / requestsPerSecond
 * (the recovery's pace), until a page has nothing after the cursor or says there is no more.
 */
async function pageFrom(v: Venue, cursor: HistoryCursor) {
  const trades: TradeMessage[] = [];
  const statuses: number[] = [];
  let at = cursor;
  let next = 0;
  for (;;) {
    // The venue's pace, not a condition: the next request waits for its slot.
    await until(() => performance.now() >= next, 'the next request slot', 10_000);
    next = performance.now() + 1_000 / v.rest.requestsPerSecond;
    const answer = await get(v.rest.url(v.endpoints.rest, v.market.symbol, at));
    statuses.push(answer.status);
    const page = v.rest.parse(answer.body, v.market.symbol);
    if (!page) throw new Error(`${v.descriptor.id}: page not understood (HTTP ${answer.status}): ${JSON.stringify(answer.body).slice(0, 200)}`);
    const fresh = page.trades.filter((t) => isAfter(t, at)).sort(place);
    trades.push(...fresh);
    if (!page.more || fresh.length === 0) return { trades, statuses };
    const last = fresh.at(-1)!;
    at = { ts: last.ts, tradeId: last.tradeId, ...(last.seq === undefined ? {} : { seq: last.seq }) };
  }
}

/** A printed trade as the event the venue's history must give, from the simulator's own record (in the venue's units). */
function printedAs(v: Venue, t: SimTrade) {
  const units = Number(t.qty) * Number(v.market.contractSize);
  return { tradeId: String(t.id), price: Number(t.price), quantity: Number((v.market.inverse ? units / Number(t.price) : units).toPrecision(12)), side: t.side, ts: t.time };
}
function eventOf(v: Venue, t: TradeMessage) {
  const e = toTradeEvent(v.descriptor.id, v.market, t, 0)!;
  return { tradeId: e.tradeId, price: e.price, quantity: Number(e.quantity.toPrecision(12)), side: e.side, ts: e.ts };
}

/** Opens the descriptor's sockets for the market, subscribes, and collects its trade messages. */
async function listen(v: Venue & { sockets: WebSocket[] }): Promise<TradeMessage[]> {
  const received: TradeMessage[] = [];
  for (const plan of v.descriptor.sockets(v.endpoints, [v.market])) {
    const session = v.descriptor.session?.() ?? { parse: v.descriptor.parse };
    const socket = new WebSocket(plan.url);
    v.sockets.push(socket);
    socket.on('message', (data) => received.push(...session.parse(data.toString()).filter((m): m is TradeMessage => m.kind === 'trade' && m.symbol === v.market.symbol)));
    await new Promise<void>((resolve, reject) => socket.once('open', resolve).once('error', reject));
    for (const m of plan.subscribe) socket.send(m);
  }
  const symbol = v.market.symbol.toLowerCase();
  const subscribed = () => [...v.server.clients].some((client) => [...client.topics].some((topic) => topic.toLowerCase().includes(symbol) && /trade/i.test(topic)));
  await until(subscribed, `${v.descriptor.id}: the trade subscription`);
  return received;
}

describe.each(cases.map((c) => [c.id, c] as const))('%s REST trade history against the simulated venue', (_id, c) => {
  // Printed: four pages' worth over 4 s; kept: two and a half pages, so the first trades are past the venue's memory.
  const retainPrinted = (5 * c.pageSize) / 2;

  test('from a cursor: exactly the printed trades after it, in order, none missing, none twice, over several pages at the descriptor pace', { timeout: 120_000 }, async () => {
    const v = await open(c, { perSecond: c.pageSize, retainPrinted });
    printFor(v.server, 4_000);
    const kept = v.server.printed.of(c.symbol);
    expect(kept).toHaveLength(retainPrinted);
    expect(v.server.printed.count).toBeGreaterThan(retainPrinted);

    const { trades, statuses } = await pageFrom(v, cursorAt(v, kept[10]!));
    expect(trades.map((t) => eventOf(v, t))).toEqual(kept.slice(11).map((t) => printedAs(v, t)));
    expect(new Set(trades.map((t) => t.tradeId)).size).toBe(trades.length);
    // Where the venue numbers trades, the page numbers are the printed ids.
    if (v.rule.continuity === 'sequential') expect(trades.map((t) => t.seq)).toEqual(kept.slice(11).map((t) => t.id));
    expect(statuses.length).toBeGreaterThan(2);
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  test('a cursor older than the venue keeps: its history starts at the oldest trade it has, or it refuses as the venue does', { timeout: 60_000 }, async () => {
    const v = await open(c, { perSecond: c.pageSize, retainPrinted });
    printFor(v.server, 4_000);
    const oldest = v.server.printed.of(c.symbol)[0]!;
    // Ten trades before the oldest kept: within one page of it, so that venues paging by id ranges reach it too.
    const cursor = cursorAt(v, { id: oldest.id - 10, time: oldest.time - 1_000 });
    const answer = await get(v.rest.url(v.endpoints.rest, c.symbol, cursor));
    if (c.beyondReach === 'oldest') {
      const first = v.rest.parse(answer.body, c.symbol)!.trades.filter((t) => isAfter(t, cursor)).sort(place)[0];
      expect(first && eventOf(v, first)).toEqual(printedAs(v, oldest));
    } else {
      expect(answer).toEqual({ status: c.beyondReach.status, body: fixtureBody(c.beyondReach.fixture) });
      expect(v.rest.parse(answer.body, c.symbol)).toBeUndefined();
    }
  });

  test('a trade from the REST history is the event of the websocket message that carried it: id, number, price, base quantity, side, time', { timeout: 60_000 }, async () => {
    const v = await open(c, { perSecond: 20 });
    const received = await listen(v);
    printFor(v.server, 2_000);
    const printed = v.server.printed.of(c.symbol);
    expect(printed.length).toBeGreaterThan(10);
    await until(() => received.length >= printed.length, `${c.id}: the ${printed.length} trades on the websocket`, { context: () => `${received.length} received` });
    expect(received).toHaveLength(printed.length);

    const first = printed[0]!;
    const { trades } = await pageFrom(v, cursorAt(v, { id: first.id - 1, time: first.time - 1 }));
    const fromRest = new Map(trades.map((t) => [t.tradeId, t]));
    expect(fromRest.size).toBe(printed.length);
    for (const ws of received) {
      const rest = fromRest.get(ws.tradeId);
      expect(rest?.seq, ws.tradeId).toBe(ws.seq);
      expect(rest && toTradeEvent(c.id, v.market, rest, 1)).toEqual(toTradeEvent(c.id, v.market, ws, 1));
    }
  });

  test("paced at the descriptor's rate the venue never refuses; past its limit it refuses in its recorded words", { timeout: 60_000 }, async () => {
    const rest = findNativeVenue(c.id)!.history!.rest!;
    // The recovery's pace on a clock of its own, through the limit the simulated venue applies.
    const paced = new RestRateLimit(c.limit.limit, c.limit.windowMs);
    const spacing = 1_000 / rest.requestsPerSecond;
    expect(Array.from({ length: 3 * c.limit.limit }, (_, k) => paced.take(k * spacing)).every(Boolean)).toBe(true);

    const v = await open(c, { perSecond: 5 });
    printFor(v.server, 2_000);
    const url = v.rest.url(v.endpoints.rest, c.symbol, cursorAt(v, v.server.printed.of(c.symbol)[0]!));
    // One request past the limit, all at once.
    const answers = await Promise.all(Array.from({ length: c.limit.limit + 1 }, () => get(url)));
    const refused = answers.filter((a) => v.rest.parse(a.body, c.symbol) === undefined);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const a of refused) expect(comparable(c, a)).toEqual(comparable(c, { status: c.refusal.status, body: fixtureBody(c.refusal.fixture) }));
    expect(answers.length - refused.length).toBeLessThanOrEqual(c.limit.limit);
  });
});

// Frames recorded from the live ccxt long-tail venues (see ingest/__tests__/__fixtures__/ccxt/SOURCES.md),
// fed through ccxt's own websocket parsing (the exchange class's handleMessage, as its socket
// would call it). What ccxt yields is checked against values read here from the raw JSON.
import ccxt, { type Exchange } from 'ccxt';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { placedSide } from './recorded.ts';

/** A recorded fixture's frames, parsed as ccxt's socket parses them (`{ at, text }` frames keep their text). */
function recordedFrames(venue: string, name: string): Record<string, unknown>[] {
  const rows = JSON.parse(readFileSync(new URL(`./__fixtures__/ccxt/${venue}/${name}`, import.meta.url), 'utf8')) as unknown[];
  return rows.map((r) => (typeof r === 'object' && r !== null && 'text' in r ? JSON.parse((r as { text: string }).text) : r) as Record<string, unknown>);
}

/** The fields of a trade we publish, as plain values. */
interface TradeFacts {
  symbol: string;
  id: string | undefined;
  price: number;
  amount: number;
  side: string;
  timestamp: number;
}

/** A ccxt market structure with the fields its websocket classes read. */
function market(id: string, base: string, quote: string, swap = false): Record<string, unknown> {
  const settle = swap ? quote : undefined;
  return {
    id, symbol: swap ? `${base}/${quote}:${quote}` : `${base}/${quote}`, base, quote, settle, baseId: base, quoteId: quote, settleId: settle,
    type: swap ? 'swap' : 'spot', spot: !swap, margin: false, swap, future: false, option: false, contract: swap,
    linear: swap ? true : undefined, inverse: swap ? false : undefined, contractSize: swap ? 1 : undefined, active: true,
    precision: { amount: 1e-8, price: 1e-8 }, limits: {},
  };
}

/** Feeds the frames to a fresh exchange of the class, offline, and returns it. */
function feed(id: string, markets: Record<string, unknown>[], frames: readonly Record<string, unknown>[]): Exchange {
  const pro = ccxt.pro as unknown as Record<string, new (config: object) => Exchange>;
  const exchange = new pro[id]!({});
  exchange.setMarkets(markets);
  // A client ccxt builds for a URL without connecting: handleMessage only resolves its (absent) futures.
  const client = (exchange as unknown as { client(url: string): unknown }).client('wss://recorded.invalid');
  const handle = (exchange as unknown as { handleMessage(client: unknown, message: unknown): void }).handleMessage.bind(exchange);
  for (const frame of frames) handle(client, frame);
  return exchange;
}

function yielded(exchange: Exchange): TradeFacts[] {
  return Object.values(exchange.trades).flatMap((cache) =>
    [...cache].map((t) => ({ symbol: t.symbol!, id: t.id ?? undefined, price: t.price, amount: t.amount!, side: t.side!, timestamp: t.timestamp! })),
  );
}

const byKey = (rows: TradeFacts[]) => [...rows].sort((a, b) => a.timestamp - b.timestamp || String(a.id).localeCompare(String(b.id)) || a.amount - b.amount);
/** A recorded frame or row read field by field: its shape is what the test checks, not a type we own. */
type Raw = Record<string, any>;

describe('bitget (v2 public, Tardis.dev recording)', () => {
  const frames = recordedFrames('bitget', 'ws_recorded_tardis.json');
  const symbols: Record<string, string> = { BTCUSDT: 'BTC/USDT', SNEKUSDT: 'SNEK/USDT', RENDERUSDT: 'RENDER/USDT' };
  test('every recorded trade: tradeId, price, size, side as sent, ts in ms', () => {
    const exchange = feed('bitget', Object.entries(symbols).map(([id, s]) => market(id, s.split('/')[0]!, 'USDT')), frames);
    const expected = frames.filter((f) => f.action).flatMap((f: Raw) =>
      f.data.map((d: Raw) => ({ symbol: symbols[f.arg.instId]!, id: d.tradeId, price: Number(d.price), amount: Number(d.size), side: d.side, timestamp: Number(d.ts) })),
    );
    expect(expected).toHaveLength(3);
    expect(byKey(yielded(exchange))).toEqual(byKey(expected));
  });
});

describe('cryptocom (Tardis.dev recording, v2 2022 and v1 2022-11)', () => {
  const frames = recordedFrames('cryptocom', 'ws_recorded_tardis.json');
  const markets = [market('RSR_USDT', 'RSR', 'USDT'), market('GODS_USDT', 'GODS', 'USDT'), market('BTC_USDT', 'BTC', 'USDT'), market('BTCUSD-PERP', 'BTC', 'USD', true)];
  const symbolOf = (id: string) => markets.find((m) => m.id === id)!.symbol as string;
  const expected = frames.filter((f: Raw) => f.result?.channel === 'trade').flatMap((f: Raw) =>
    f.result.data.map((d: Raw) => ({ symbol: symbolOf(f.result.instrument_name), id: String(d.d), price: Number(d.p), amount: Number(d.q), side: d.s.toLowerCase(), timestamp: d.t })),
  );
  test('every recorded trade: d, p, q, s lower-cased, t (trade time, ms)', () => {
    expect(expected).toHaveLength(11);
    expect(byKey(yielded(feed('cryptocom', markets, frames)))).toEqual(byKey(expected));
  });
  test('the venue repeats one trade id over several fills of a frame (BTCUSD-PERP): ccxt passes the ids through unchanged', () => {
    const perp = yielded(feed('cryptocom', markets, frames)).filter((t) => t.symbol === 'BTC/USD:USD');
    expect(perp.map((t) => t.amount).sort()).toEqual([0.005, 0.005, 0.0244, 0.1]);
    expect(new Set(perp.map((t) => t.id)).size).toBe(1);
  });
});

describe('poloniex (v2 public: cryptofeed 2022-08-21 recording, Tardis.dev sample)', () => {
  const frames = [...recordedFrames('poloniex', 'ws_recorded_cryptofeed.json'), ...recordedFrames('poloniex', 'ws_recorded_tardis.json')];
  const ids = ['BTC_USDT', 'BCH_USDT', 'USDJ_USDT', 'USDD_USDT'];
  const markets = ids.map((id) => market(id, id.split('_')[0]!, 'USDT'));
  test('every recorded trade: id, price, quantity (base), takerSide, createTime (ms)', () => {
    const expected = frames.filter((f) => f.channel === 'trades' && f.data).flatMap((f: Raw) =>
      f.data.map((d: Raw) => ({ symbol: d.symbol.replace('_', '/'), id: d.id, price: Number(d.price), amount: Number(d.quantity), side: d.takerSide, timestamp: d.createTime })),
    );
    expect(expected).toHaveLength(7);
    expect(byKey(yielded(feed('poloniex', markets, frames)))).toEqual(byKey(expected));
  });

  // BTC_USDT's book_lv2 frames of the same connection: a snapshot, then updates in receive order.
  const bookFrames = recordedFrames('poloniex', 'ws_recorded_cryptofeed_book.json').filter((f) => f.channel === 'book_lv2' && f.data);
  const atOf = (name: string) => (JSON.parse(readFileSync(new URL(`./__fixtures__/ccxt/poloniex/${name}`, import.meta.url), 'utf8')) as { at: number; text: string }[]).map((r) => ({ at: r.at, message: JSON.parse(r.text) as Raw }));
  /** The book rebuilt from the raw levels: snapshot replaces, a level of size 0 is deleted. */
  function applyRaw(book: { bids: Map<number, number>; asks: Map<number, number> }, m: Raw): void {
    const d = m.data[0];
    if (m.action === 'snapshot') (book.bids.clear(), book.asks.clear());
    for (const [side, levels] of [[book.bids, d.bids], [book.asks, d.asks]] as const)
      for (const [p, q] of levels as [string, string][]) (Number(q) === 0 ? side.delete(Number(p)) : side.set(Number(p), Number(q)));
  }

  test('book_lv2: the update ids chain (lastId = the previous id) and ccxt ends on the book rebuilt from the raw levels', () => {
    expect(bookFrames).toHaveLength(160);
    expect(bookFrames[0]!.action).toBe('snapshot');
    for (let i = 1; i < bookFrames.length; i++) expect((bookFrames[i] as Raw).data[0].lastId).toBe((bookFrames[i - 1] as Raw).data[0].id);
    const book = { bids: new Map<number, number>(), asks: new Map<number, number>() };
    for (const m of bookFrames) applyRaw(book, m);
    const exchange = feed('poloniex', [market('BTC_USDT', 'BTC', 'USDT')], bookFrames);
    const ob = exchange.orderbooks['BTC/USDT']!;
    expect(ob.bids).toEqual([...book.bids].sort((a, b) => b[0] - a[0]));
    expect(ob.asks).toEqual([...book.asks].sort((a, b) => a[0] - b[0]));
    expect(ob.timestamp).toBe((bookFrames.at(-1) as Raw).data[0].ts);
  });

  test('takerSide is the taker: every BTC_USDT trade placed against the book of its moment agrees', () => {
    const events = [...atOf('ws_recorded_cryptofeed_book.json'), ...atOf('ws_recorded_cryptofeed.json')].sort((a, b) => a.at - b.at);
    const book = { bids: new Map<number, number>(), asks: new Map<number, number>() };
    const placed: { raw: string; placed: string | undefined }[] = [];
    for (const { message: m } of events) {
      if (m.channel === 'book_lv2' && m.data) applyRaw(book, m);
      if (m.channel !== 'trades' || !m.data || m.data[0].symbol !== 'BTC_USDT' || book.bids.size === 0) continue;
      const price = Number(m.data[0].price);
      placed.push({ raw: m.data[0].takerSide, placed: placedSide(price, Math.max(...book.bids.keys()), Math.min(...book.asks.keys())) });
    }
    expect(placed).toHaveLength(4);
    const placeable = placed.filter((p) => p.placed !== undefined);
    expect(placeable).toHaveLength(4);
    for (const p of placeable) expect(p.raw).toBe(p.placed);
  });
});

describe('woo (legacy public stream, Tardis.dev recording 2023-01)', () => {
  const frames = recordedFrames('woo', 'ws_recorded_tardis.json');
  const markets = [market('PERP_GALA_USDT', 'GALA', 'USDT', true), market('PERP_BTC_USDT', 'BTC', 'USDT', true), market('SPOT_ETH_USDT', 'ETH', 'USDT')];
  test('every recorded trade: price, size, side lower-cased; no trade id; time = the frame ts (the data has none)', () => {
    const expected = frames.map((f: Raw) => ({
      symbol: markets.find((m) => m.id === f.data.symbol)!.symbol as string, id: undefined, price: f.data.price, amount: f.data.size, side: f.data.side.toLowerCase(), timestamp: f.ts,
    }));
    expect(expected).toHaveLength(3);
    expect(byKey(yielded(feed('woo', markets, frames)))).toEqual(byKey(expected));
  });
});

describe('lighter (Tardis.dev recording 2026-04, market 1 = BTC perpetual)', () => {
  const frames = recordedFrames('lighter', 'ws_recorded_tardis.json');
  const markets = [market('1', 'BTC', 'USDC', true)];
  // is_maker_ask: the resting order was the ask, so the taker bought.
  const takerSide = (d: Raw) => (d.is_maker_ask ? 'buy' : 'sell');
  test('every recorded trade: trade_id, price, size, taker side from is_maker_ask, timestamp (ms)', () => {
    const expected = frames.flatMap((f: Raw) =>
      (f.trades ?? []).map((d: Raw) => ({ symbol: 'BTC/USDC:USDC', id: String(d.trade_id), price: Number(d.price), amount: Number(d.size), side: takerSide(d), timestamp: d.timestamp })),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(byKey(yielded(feed('lighter', markets, frames)))).toEqual(byKey(expected));
  });
  test('every recorded liquidation_trades row becomes one ccxt liquidation: price, contracts, side, timestamp', () => {
    const expected = frames.flatMap((f: Raw) => (f.liquidation_trades ?? []).map((d: Raw) => ({ price: Number(d.price), contracts: Number(d.size), side: takerSide(d), timestamp: d.timestamp })));
    expect(expected.length).toBeGreaterThan(0);
    const cache = (feed('lighter', markets, frames) as unknown as { liquidations: Iterable<Raw> }).liquidations;
    const got = [...cache].map((l) => ({ price: l.price, contracts: l.contracts, side: l.side, timestamp: l.timestamp }));
    const order = (rows: typeof got) => [...rows].sort((a, b) => a.timestamp - b.timestamp || a.price - b.price || a.contracts - b.contracts);
    expect(order(got)).toEqual(order(expected));
  });
});

// OKX v5's public websocket and instruments REST over the SIMULATED market model, for spot
// (instType SPOT) and linear perpetual swaps (SWAP, sizes in contracts of ctVal base units). The
// trade history (`/api/v5/market/history-trades`, one row per fill) answers from the trades the
// venue printed, sent or not. Each simulated trade is one fill, so each `trades` push says count 1.
import { okxBookChecksum } from './checksums.ts';
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

export const okxSpotFormat: ListingFormat = { quotes: ['USDT', 'USDC'], appetite: 6, market: (base, quote) => ({ symbol: `${base}-${quote}`, base, quote }) };

/**
 * Contract values of a few hundred to a thousand dollars, a power of ten of the base (as on the
 * venue): OKX lists tiny-priced assets by their contract value (PEPE-USDT-SWAP), not per 1000.
 */
export const okxSwapFormat: ListingFormat = {
  quotes: ['USDT', 'USDC'],
  appetite: 4,
  market(base, quote, price) {
    if (price === undefined) throw new Error(`simulator: an OKX swap's contract value needs ${base}'s price`);
    return { symbol: `${base}-${quote}-SWAP`, base, quote, perpetual: true, contractSize: 10 ** Math.floor(Math.log10(1_000 / price)) };
  },
};

export function okxSpotListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  return tickers.map((t) => okxSpotFormat.market(t, 'USDT'));
}

export function okxSwapListings(tickers: readonly string[] = simulatedTickers, price: (ticker: string) => number): ListingSpec[] {
  return tickers.map((t) => okxSwapFormat.market(t, 'USDT', price(t)));
}

const okxLevels = (levels: [string, string][]) => levels.map(([p, q]) => [p, q, '0', '1']);

/** The checksum the venue sends: computed over its own book, in its own strings. */
const checksumOf = (m: SimMarket) => okxBookChecksum(sortedLevels(m.bids, 'bid', 25), sortedLevels(m.asks, 'ask', 25));

/** history-trades: 20 requests per 2 s per IP (OKX v5 docs). */
export const okxHistoryLimit = { limit: 20, windowMs: 2_000 };
const historyPageMax = 100;

const fillRow = (t: SimTrade) => ({ instId: t.symbol, side: t.side, sz: t.qty, px: t.price, tradeId: String(t.id), ts: String(t.time) });
const okxError = (code: string, msg: string) => ({ code, msg, data: [] });

/**
 * `GET /api/v5/market/history-trades`, newest first, up to `limit` (at most 100, the default).
 * type 1: `after` = older than that tradeId, `before` = newer than it ("the latest data" when alone);
 * type 2: `after` is a time. Ids past the venue's memory are simply not there.
 */
function historyTrades(server: SimVenueServer, url: URL, limiter: RestRateLimit) {
  if (!limiter.take()) return { status: 429, body: { msg: 'Too Many Requests', code: '50011' } };
  const symbol = url.searchParams.get('instId') ?? '';
  if (!server.listing.bySymbol.has(symbol)) return { status: 200, body: okxError('51001', "Instrument ID doesn't exist.") };
  const q = (name: string) => (url.searchParams.has(name) ? Number(url.searchParams.get(name)) : undefined);
  const [type, after, before, asked] = [url.searchParams.get('type') ?? '1', q('after'), q('before'), q('limit') ?? historyPageMax];
  if ([after, before, asked].some((v) => v !== undefined && !Number.isSafeInteger(v)) || (type !== '1' && type !== '2')) {
    return { status: 400, body: okxError('51000', 'Parameter error') };
  }
  if (type === '2' && before !== undefined) return { status: 400, body: okxError('50039', "The before parameter isn't available for implementing timestamp pagination.") };
  const limit = Math.min(Math.max(asked!, 1), historyPageMax);
  let fills: SimTrade[];
  if (type === '2') fills = server.printed.of(symbol).filter((t) => after === undefined || t.time < after).slice(-limit).reverse();
  else if (after !== undefined) fills = server.printed.beforeId(symbol, after, limit).filter((t) => before === undefined || t.id > before);
  else fills = server.printed.latest(symbol, limit).filter((t) => before === undefined || t.id > before);
  return { status: 200, body: { code: '0', msg: '', data: fills.map(fillRow) } };
}

export function okxProtocol(server: SimVenueServer, instType: 'SPOT' | 'SWAP'): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  /** At most one liquidation order per contract per second. */
  const lastLiquidationAt = new Map<string, number>();
  const connId = (c: SimClient) => `sim${c.openedAt.toString(36)}`;
  const historyLimit = new RestRateLimit(okxHistoryLimit.limit, okxHistoryLimit.windowMs);

  function instrument(m: SimMarket) {
    const [uly] = m.symbol.split('-SWAP');
    return instType === 'SPOT'
      ? { instType, instId: m.symbol, baseCcy: m.base, quoteCcy: m.quote, state: 'live', tickSz: m.tick.toFixed(m.priceDecimals), lotSz: '1' }
      : {
          instType, instId: m.symbol, uly, instFamily: uly, baseCcy: '', quoteCcy: '', settleCcy: m.quote, ctType: 'linear',
          ctVal: m.contractSizeText, ctMult: '1', ctValCcy: m.base, state: 'live', tickSz: m.tick.toFixed(m.priceDecimals), lotSz: '1',
        };
  }

  function snapshot(m: SimMarket, now: number) {
    return {
      arg: { channel: 'books', instId: m.symbol },
      action: 'snapshot',
      data: [{ asks: okxLevels(sortedLevels(m.asks, 'ask', 400)), bids: okxLevels(sortedLevels(m.bids, 'bid', 400)), ts: String(now), checksum: checksumOf(m), prevSeqId: -1, seqId: m.updateId }],
    };
  }

  return {
    rest(url) {
      if (url.pathname === '/api/v5/market/history-trades') return historyTrades(server, url, historyLimit);
      if (url.pathname !== '/api/v5/public/instruments') return undefined;
      const asked = url.searchParams.get('instType');
      return { status: 200, body: { code: '0', msg: '', data: asked === instType ? server.listing.markets.map(instrument) : [] } };
    },
    message(client, text) {
      if (text === 'ping') {
        server.send(client, 'pong');
        return;
      }
      let request: { op?: unknown; args?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        server.send(client, { event: 'error', code: '60012', msg: `Invalid request: ${text.slice(0, 50)}`, connId: connId(client) });
        return;
      }
      if ((request.op !== 'subscribe' && request.op !== 'unsubscribe') || !Array.isArray(request.args)) {
        server.send(client, { event: 'error', code: '60012', msg: 'Invalid request', connId: connId(client) });
        return;
      }
      for (const arg of request.args as { channel?: string; instId?: string; instType?: string }[]) {
        const key = arg.channel === 'liquidation-orders' ? arg.instType : arg.instId;
        const known = arg.channel === 'liquidation-orders' ? arg.instType === 'SWAP' && instType === 'SWAP' : bySymbol.has(arg.instId ?? '');
        if (!known || (arg.channel !== 'trades' && arg.channel !== 'books' && arg.channel !== 'liquidation-orders')) {
          server.send(client, { event: 'error', code: '60018', msg: `Wrong URL or channel:${arg.channel},instId:${key} doesn't exist`, connId: connId(client) });
          continue;
        }
        const topic = `${arg.channel}:${key}`;
        if (request.op === 'unsubscribe') {
          client.topics.delete(topic);
          server.send(client, { event: 'unsubscribe', arg, connId: connId(client) });
          continue;
        }
        client.topics.add(topic);
        server.send(client, { event: 'subscribe', arg, connId: connId(client) });
        if (arg.channel === 'books') server.send(client, snapshot(bySymbol.get(arg.instId!)!, Date.now()));
      }
    },
    publish(m, step, now) {
      const trades = step.trades.map((t) => ({ instId: m.symbol, tradeId: String(t.id), px: t.price, sz: t.qty, side: t.side, ts: String(t.time), count: '1' }));
      if (trades.length > 0 && server.publish(`trades:${m.symbol}`, () => ({ arg: { channel: 'trades', instId: m.symbol }, data: trades }))) server.trades.push(...step.trades);
      for (const l of step.liquidations) {
        if (l.time - (lastLiquidationAt.get(m.symbol) ?? -Infinity) < 1_000) continue;
        const [uly] = m.symbol.split('-SWAP');
        const details = [{ side: l.positionSide === 'long' ? 'sell' : 'buy', posSide: l.positionSide, bkPx: l.price, sz: l.qty, bkLoss: '0', ccy: '', ts: String(l.time) }];
        const message = { arg: { channel: 'liquidation-orders', instType: 'SWAP' }, data: [{ instId: m.symbol, instFamily: uly, instType: 'SWAP', uly, details }] };
        if (server.publish('liquidation-orders:SWAP', () => message)) {
          lastLiquidationAt.set(m.symbol, l.time);
          server.liquidations.push(l);
        }
      }
      if (server.takeGap(m.symbol)) return;
      const { diff } = step;
      const update = {
        arg: { channel: 'books', instId: m.symbol },
        action: 'update',
        data: [{ asks: okxLevels(diff.asks), bids: okxLevels(diff.bids), ts: String(now), checksum: checksumOf(m), prevSeqId: diff.firstUpdateId - 1, seqId: diff.finalUpdateId }],
      };
      server.publish(`books:${m.symbol}`, () => update);
    },
    reconnectNotice: () => ({ event: 'notice', code: '64008', msg: 'The connection will soon be closed for a service upgrade. Please reconnect.' }),
  };
}

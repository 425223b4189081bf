// Binance USD-M futures market streams: https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams
// Local book rules: "How to manage a local order book correctly" (same section); liquidations:
// "Liquidation Order Streams". Since 2026-04 streams are routed: depth on /public, trades and
// liquidations on /market (https://developers.binance.info/docs/derivatives/usds-margined-futures/websocket-market-streams/Important-WebSocket-Change-Notice).
// Trade history: the trades we collect are aggregate trades (`@aggTrade`), recovered from
// `GET /fapi/v1/aggTrades?fromId=` (https://developers.binance.com/docs/derivatives/usds-margined-futures/market-data/rest-api/Compressed-Aggregate-Trades-List).
import { z } from 'zod';
import { catalogued, integerTradeNumber, type HistoryCursor, type TradeHistoryRule, type VenueDescriptor, type VenueMessage } from '../venue.ts';
import { binanceHistoryPage, binanceSockets, historyPageSize, parseBinanceFrame, parseDepthSnapshot, parseDepthUpdate, parseExchangeInfo } from './binance.ts';

const aggTrade = z.object({ e: z.literal('aggTrade'), s: z.string(), a: z.number(), p: z.string(), q: z.string(), T: z.number(), m: z.boolean() }).loose();
/** A REST aggregate trade: the stream's fields without the event envelope. */
const restAggTrade = aggTrade.omit({ e: true, s: true });
const forceOrder = z
  .object({
    e: z.literal('forceOrder'),
    o: z.object({ s: z.string(), S: z.enum(['BUY', 'SELL']), ap: z.string(), z: z.string(), X: z.string(), T: z.number() }).loose(),
  })
  .loose();

function parsePayload(data: Record<string, unknown>): VenueMessage[] | undefined {
  switch (data.e) {
    case 'aggTrade': {
      const t = aggTrade.safeParse(data);
      if (!t.success) return undefined;
      // One aggregate trade: the fills of one taker order at one price. m = the buyer was the maker.
      // `a` numbers a symbol's aggregate trades consecutively (the recorded stream runs without a hole).
      return [{ kind: 'trade', symbol: t.data.s, tradeId: String(t.data.a), seq: t.data.a, price: t.data.p, quantity: t.data.q, side: t.data.m ? 'sell' : 'buy', ts: t.data.T }];
    }
    case 'depthUpdate': {
      const d = parseDepthUpdate(data);
      return d ? [d] : undefined;
    }
    case 'forceOrder': {
      const f = forceOrder.safeParse(data);
      if (!f.success) return undefined;
      const o = f.data.o;
      // Only what was executed counts: the cumulative filled quantity at its average price.
      if (o.X !== 'FILLED' && o.X !== 'PARTIALLY_FILLED') return [{ kind: 'control', what: 'status', detail: `forceOrder ${o.X}` }];
      return [
        {
          kind: 'liquidation',
          symbol: o.s,
          // The venue gives no id: trade time, side and the fill identify the liquidation within a market.
          liquidationId: `${o.T}-${o.S}-${o.z}@${o.ap}`,
          price: o.ap,
          quantity: o.z,
          // The forced order closes the position: a SELL closes a long.
          positionSide: o.S === 'SELL' ? 'long' : 'short',
          ts: o.T,
        },
      ];
    }
    default:
      return undefined;
  }
}

/** One page of `GET /fapi/v1/aggTrades`, oldest first. */
export const parseAggTrades = (json: unknown, symbol: string) =>
  binanceHistoryPage(restAggTrade, json, (t) => ({ kind: 'trade', symbol, tradeId: String(t.a), seq: t.a, price: t.p, quantity: t.q, side: t.m ? 'sell' : 'buy', ts: t.T }));

/** From the next aggregate id; a time cursor asks from its millisecond (`startTime` is inclusive). */
function aggTradesUrl(rest: string, symbol: string, after: HistoryCursor): string {
  const from = after.seq === undefined ? `startTime=${after.ts}` : `fromId=${after.seq + 1}`;
  return `${rest}/fapi/v1/aggTrades?symbol=${encodeURIComponent(symbol)}&${from}&limit=${historyPageSize}`;
}

const history: TradeHistoryRule = {
  // Aggregate ids are consecutive per symbol: insurance-fund and ADL fills are not aggregated, so
  // they leave holes only in the raw ids (`f`..`l`, binance-public-data#378), not in `a`.
  continuity: 'sequential',
  // The stored trade id is the trade's number: a restart's recovery starts from it.
  seqOf: integerTradeNumber,
  rest: {
    // The page says a year; live probes found two days: older `startTime` or `fromId` are refused with
    // 400 {"code":-4166,"msg":"Search window is restricted to recent 2 days only."} (two independent
    // third-party probes, 2026-10; the research's [S] sources). The shorter one is what recovery can count on.
    reachMs: 2 * 86_400_000,
    // Weight 20 of the IP's 2,400 a minute (2 pages a second at most); half, as depth snapshots draw on it too.
    requestsPerSecond: 1,
    url: aggTradesUrl,
    parse: parseAggTrades,
  },
};

export const binanceFutures: VenueDescriptor = {
  ...catalogued('binance-futures'),
  docs: 'https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams',
  endpoints: { ws: 'wss://fstream.binance.com', rest: 'https://fapi.binance.com' },
  channels: ['trades', 'books', 'liquidations'],
  liquidations: { sampled: true, rule: 'forceOrder: only the latest liquidation per symbol in each 1000 ms window is pushed' },
  quotes: ['USDT', 'USDC'],
  listMarkets: async (io, endpoints) => parseExchangeInfo(await io.getJson(`${endpoints.rest}/fapi/v1/exchangeInfo`), 'PERPETUAL'),
  // Sources disagree on 1024 or 200 streams per connection: 200 is safe.
  sockets: (endpoints, markets) => [
    ...binanceSockets(`${endpoints.ws}/public/stream`, markets, (m) => [`${m.symbol.toLowerCase()}@depth@100ms`], { perSocket: 200, perMessage: 100 }),
    ...binanceSockets(`${endpoints.ws}/market/stream`, markets, (m) => [`${m.symbol.toLowerCase()}@aggTrade`], { perSocket: 200, perMessage: 100 }, ['!forceOrder@arr']),
  ],
  // The server pings every 3 minutes; ours every 30 s are answered, so a minute of silence is a dead socket.
  keepAlive: { pingEveryMs: 30_000, staleAfterMs: 60_000 },
  maxConnectionMs: 24 * 3_600_000,
  // 10 incoming messages per second.
  sendsPerSecond: 8,
  parse: (text) => parseBinanceFrame(text, parsePayload),
  book: {
    restSnapshot: {
      url: (rest, symbol) => `${rest}/fapi/v1/depth?symbol=${encodeURIComponent(symbol)}&limit=1000`,
      parse: parseDepthSnapshot,
    },
    // The first diff applied straddles the snapshot; after it, each diff's `pu` is the previous diff's `u`.
    sequence(lastId, u, fresh) {
      const first = u.firstId ?? Number.NaN;
      const final = u.lastId ?? Number.NaN;
      if (fresh) {
        if (final < lastId) return 'stale';
        return first <= lastId || u.prevId === lastId ? 'apply' : 'gap';
      }
      if (final <= lastId) return 'stale';
      return u.prevId === lastId ? 'apply' : 'gap';
    },
  },
  history,
};

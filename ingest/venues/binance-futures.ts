// Binance USD-M futures market streams: https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams
// Local book rules: "How to manage a local order book correctly" (same section); liquidations:
// "Liquidation Order Streams". Since 2026-04 streams are routed: depth on /public, trades and
// liquidations on /market (https://developers.binance.info/docs/derivatives/usds-margined-futures/websocket-market-streams/Important-WebSocket-Change-Notice).
import { z } from 'zod';
import { catalogued, type VenueDescriptor, type VenueMessage } from '../venue.ts';
import { binanceSockets, parseBinanceFrame, parseDepthSnapshot, parseDepthUpdate, parseExchangeInfo } from './binance.ts';

const aggTrade = z.object({ e: z.literal('aggTrade'), s: z.string(), a: z.number(), p: z.string(), q: z.string(), T: z.number(), m: z.boolean() }).loose();
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
      return [{ kind: 'trade', symbol: t.data.s, tradeId: String(t.data.a), price: t.data.p, quantity: t.data.q, side: t.data.m ? 'sell' : 'buy', ts: t.data.T }];
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
};

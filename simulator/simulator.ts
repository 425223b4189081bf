// The market simulator: ONE seeded market model, served on loopback in the protocol of every native
// venue (one file per protocol beside this one). All of it is SIMULATED data.
import type { VenueEndpoints } from '../ingest/venue.ts';
import { binanceFuturesListings, binanceFuturesProtocol } from './binanceFuturesServer.ts';
import { binanceListings, binanceProtocol } from './binanceServer.ts';
import { bitfinexListings, bitfinexProtocol } from './bitfinexServer.ts';
import { bitmexListings, bitmexProtocol } from './bitmexServer.ts';
import { bitstampListings, bitstampProtocol } from './bitstampServer.ts';
import { bybitListings, bybitProtocol } from './bybitServer.ts';
import { coinbaseListings, coinbaseProtocol } from './coinbaseServer.ts';
import { deribitListings, deribitProtocol } from './deribitServer.ts';
import { gateListings, gateProtocol } from './gateServer.ts';
import { krakenListings, krakenProtocol } from './krakenServer.ts';
import { kucoinListings, kucoinProtocol } from './kucoinServer.ts';
import { okxProtocol, okxSpotListings, okxSwapListings } from './okxServer.ts';
import { MarketModel, simulatedTickers, type ListingSpec } from './market.ts';
import { SimVenueServer, type SentTrade, type VenueProtocol, type VenueServerOptions } from './venueServer.ts';

interface SimulatedVenueKind {
  listings(tickers: readonly string[], model: MarketModel): ListingSpec[];
  protocol(server: SimVenueServer): VenueProtocol;
  /** The venue's own habits: its pings, its connection lifetime. */
  defaults?: VenueServerOptions;
}

const kinds = {
  binance: { listings: binanceListings, protocol: binanceProtocol, defaults: { pingEveryMs: 20_000 } },
  'binance-futures': { listings: binanceFuturesListings, protocol: binanceFuturesProtocol, defaults: { pingEveryMs: 180_000 } },
  okx: { listings: okxSpotListings, protocol: (server) => okxProtocol(server, 'SPOT') },
  'okx-swap': { listings: (tickers, model) => okxSwapListings(tickers, (t) => model.reference(t, 'USDT')), protocol: (server) => okxProtocol(server, 'SWAP') },
  bybit: { listings: bybitListings('spot'), protocol: (server) => bybitProtocol(server, 'spot') },
  'bybit-linear': { listings: bybitListings('linear'), protocol: (server) => bybitProtocol(server, 'linear') },
  coinbase: { listings: coinbaseListings, protocol: coinbaseProtocol },
  kraken: { listings: krakenListings, protocol: krakenProtocol },
  bitstamp: { listings: bitstampListings, protocol: bitstampProtocol },
  bitfinex: { listings: bitfinexListings('exchange'), protocol: (server) => bitfinexProtocol(server, 'exchange') },
  'bitfinex-derivatives': { listings: bitfinexListings('futures'), protocol: (server) => bitfinexProtocol(server, 'futures') },
  gate: { listings: gateListings, protocol: gateProtocol },
  deribit: { listings: deribitListings, protocol: deribitProtocol },
  kucoin: { listings: kucoinListings, protocol: kucoinProtocol },
  bitmex: { listings: bitmexListings, protocol: bitmexProtocol },
} satisfies Record<string, SimulatedVenueKind>;

export type SimulatedVenueId = keyof typeof kinds;
export const simulatedVenueIds = Object.keys(kinds) as SimulatedVenueId[];

export interface SimulatedVenueOptions extends VenueServerOptions {
  /** Prices on this venue are the reference times (1 + biasBps / 10,000). */
  biasBps?: number;
}

export interface SimulatorOptions {
  seed?: number;
  /** Venues to serve; every simulated venue by default. */
  venues?: readonly SimulatedVenueId[];
  /** Assets listed (fewer make faster tests); every simulated asset by default. */
  tickers?: readonly string[];
  tradesPerSecondPerMarket?: number;
  liquidationsPerSecondPerMarket?: number;
  /** How often the model advances and venues send (ms). */
  tickMs?: number;
  perVenue?: Partial<Record<SimulatedVenueId, SimulatedVenueOptions>>;
}

export interface Simulator {
  readonly venues: readonly SimulatedVenueId[];
  venue(id: SimulatedVenueId): SimVenueServer;
  /** Where a collector of this venue connects (its `VENUE_<ID>_WS_URL` / `_REST_URL`). */
  endpoints(id: SimulatedVenueId): VenueEndpoints;
  /** The model's current reference price of `base` in `quote`. */
  reference(base: string, quote: string): number;
  /** Stops (and restarts) the market: no trades, no book changes, sockets stay open. */
  pause(): void;
  resume(): void;
  /** Sets every market's trade rate from now on (a burst, and back). */
  setTradesPerSecondPerMarket(perSecond: number): void;
  /** `SimVenueServer.onTradeSent` on every venue: each trade sent, as a collector stores it; nothing kept. Returns the remover. */
  onTradeSent(listener: (sent: SentTrade) => void): () => void;
  /** `SimVenueServer.onTradePrinted` on every venue: each trade printed, sent or not. Returns the remover. */
  onTradePrinted(listener: (printed: SentTrade) => void): () => void;
  close(): Promise<void>;
}

export function isSimulatedVenue(id: string): id is SimulatedVenueId {
  return Object.hasOwn(kinds, id);
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const model = new MarketModel(options.seed ?? 1, {
    tradesPerSecondPerMarket: options.tradesPerSecondPerMarket ?? 2,
    ...(options.liquidationsPerSecondPerMarket === undefined ? {} : { liquidationsPerSecondPerMarket: options.liquidationsPerSecondPerMarket }),
  });
  const tickers = options.tickers ?? simulatedTickers;
  const ids = options.venues ?? simulatedVenueIds;
  const servers = new Map<SimulatedVenueId, SimVenueServer>();
  for (const id of ids) {
    const kind: SimulatedVenueKind = kinds[id];
    const { biasBps, ...serverOptions } = { ...kind.defaults, ...options.perVenue?.[id] };
    const server = new SimVenueServer(model.listing(id, kind.listings(tickers, model), biasBps), serverOptions);
    server.protocol = kind.protocol(server);
    await server.listen(0);
    servers.set(id, server);
  }

  let last = Date.now();
  let paused = false;
  const ticker = setInterval(() => {
    const now = Date.now();
    if (!paused) {
      model.advance(now - last);
      for (const server of servers.values()) server.tick(last + 1, now);
    }
    last = now;
  }, options.tickMs ?? 100);

  const get = (id: SimulatedVenueId) => {
    const server = servers.get(id);
    if (!server) throw new Error(`simulator: venue ${id} is not running`);
    return server;
  };
  return {
    venues: ids,
    venue: get,
    endpoints: (id) => ({ ws: get(id).wsUrl, rest: get(id).restUrl }),
    reference: (base, quote) => model.reference(base, quote),
    pause: () => void (paused = true),
    resume: () => void (paused = false),
    setTradesPerSecondPerMarket: (perSecond) => void (model.options.tradesPerSecondPerMarket = perSecond),
    onTradeSent(listener) {
      const removers = [...servers.values()].map((s) => s.onTradeSent(listener));
      return () => removers.forEach((remove) => remove());
    },
    onTradePrinted(listener) {
      const removers = [...servers.values()].map((s) => s.onTradePrinted(listener));
      return () => removers.forEach((remove) => remove());
    },
    async close() {
      clearInterval(ticker);
      await Promise.all([...servers.values()].map((s) => s.close()));
    },
  };
}

// The market simulator: ONE seeded market model, served on loopback in the protocol of every native
// venue (one file per protocol beside this one). All of it is SIMULATED data.
import type { VenueEndpoints } from '../ingest/venue.ts';
import { binanceFuturesFormat, binanceFuturesListings, binanceFuturesProtocol } from './binanceFuturesServer.ts';
import { binanceFormat, binanceListings, binanceProtocol } from './binanceServer.ts';
import { bitfinexFormats, bitfinexListings, bitfinexProtocol } from './bitfinexServer.ts';
import { bitmexFormat, bitmexListings, bitmexProtocol } from './bitmexServer.ts';
import { bitstampFormat, bitstampListings, bitstampProtocol } from './bitstampServer.ts';
import { bybitFormats, bybitListings, bybitProtocol } from './bybitServer.ts';
import { coinbaseFormat, coinbaseListings, coinbaseProtocol } from './coinbaseServer.ts';
import { deribitFormat, deribitListings, deribitProtocol } from './deribitServer.ts';
import { gateFormat, gateListings, gateProtocol } from './gateServer.ts';
import { krakenFormat, krakenListings, krakenProtocol } from './krakenServer.ts';
import { kucoinFormat, kucoinListings, kucoinProtocol } from './kucoinServer.ts';
import { LiveUniverse, type SimulatorUniverse } from './liveUniverse.ts';
import { okxProtocol, okxSpotFormat, okxSpotListings, okxSwapFormat, okxSwapListings } from './okxServer.ts';
import { MarketModel, simulatedTickers, type ListingFormat, type ListingSpec, type VenueListing } from './market.ts';
import { generateUniverse, type Universe, type UniverseOptions } from './universe.ts';
import { SimVenueServer, type SentTrade, type VenueProtocol, type VenueServerOptions } from './venueServer.ts';

interface SimulatedVenueKind {
  listings(tickers: readonly string[], model: MarketModel): ListingSpec[];
  protocol(server: SimVenueServer): VenueProtocol;
  /** How the venue writes a market of an asset the universe makes up. */
  format: ListingFormat;
  /** The venue's own habits: its pings, its connection lifetime. */
  defaults?: VenueServerOptions;
}

const kinds = {
  binance: { listings: binanceListings, protocol: binanceProtocol, format: binanceFormat, defaults: { pingEveryMs: 20_000 } },
  'binance-futures': { listings: binanceFuturesListings, protocol: binanceFuturesProtocol, format: binanceFuturesFormat, defaults: { pingEveryMs: 180_000 } },
  okx: { listings: okxSpotListings, protocol: (server) => okxProtocol(server, 'SPOT'), format: okxSpotFormat },
  'okx-swap': { listings: (tickers, model) => okxSwapListings(tickers, (t) => model.reference(t, 'USDT')), protocol: (server) => okxProtocol(server, 'SWAP'), format: okxSwapFormat },
  bybit: { listings: bybitListings('spot'), protocol: (server) => bybitProtocol(server, 'spot'), format: bybitFormats.spot },
  'bybit-linear': { listings: bybitListings('linear'), protocol: (server) => bybitProtocol(server, 'linear'), format: bybitFormats.linear },
  coinbase: { listings: coinbaseListings, protocol: coinbaseProtocol, format: coinbaseFormat },
  kraken: { listings: krakenListings, protocol: krakenProtocol, format: krakenFormat },
  bitstamp: { listings: bitstampListings, protocol: bitstampProtocol, format: bitstampFormat },
  bitfinex: { listings: bitfinexListings('exchange'), protocol: (server) => bitfinexProtocol(server, 'exchange'), format: bitfinexFormats.exchange },
  'bitfinex-derivatives': { listings: bitfinexListings('futures'), protocol: (server) => bitfinexProtocol(server, 'futures'), format: bitfinexFormats.futures },
  gate: { listings: gateListings, protocol: gateProtocol, format: gateFormat },
  deribit: { listings: deribitListings, protocol: deribitProtocol, format: deribitFormat },
  kucoin: { listings: kucoinListings, protocol: kucoinProtocol, format: kucoinFormat },
  bitmex: { listings: bitmexListings, protocol: bitmexProtocol, format: bitmexFormat },
} satisfies Record<string, SimulatedVenueKind>;

export type SimulatedVenueId = keyof typeof kinds;
export const simulatedVenueIds = Object.keys(kinds) as SimulatedVenueId[];

/** How each simulated venue writes its markets: what the universe lists synthetic assets with. */
export const listingFormats = Object.fromEntries(simulatedVenueIds.map((id) => [id, kinds[id].format])) as Record<SimulatedVenueId, ListingFormat>;

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
  /**
   * Adds the long tail of the market on top of the markets above: thousands of synthetic assets over
   * the running venues, each market at its own rate, some listing and delisting while running
   * (simulator/universe.ts). Off by default; `{}` is the full size, `{ assets: 200 }` a small one.
   */
  universe?: UniverseOptions;
}

export interface Simulator {
  readonly venues: readonly SimulatedVenueId[];
  /** The universe's truth and listings on command, when `options.universe` was given. */
  readonly universe: SimulatorUniverse | undefined;
  venue(id: SimulatedVenueId): SimVenueServer;
  /** Where a collector of this venue connects (its `VENUE_<ID>_WS_URL` / `_REST_URL`). */
  endpoints(id: SimulatedVenueId): VenueEndpoints;
  /** The model's current reference price of `base` in `quote`. */
  reference(base: string, quote: string): number;
  /** Stops (and restarts) the market: no trades, no book changes, sockets stay open. */
  pause(): void;
  resume(): void;
  /** Sets the trade rate of every market at the uniform rate from now on (a burst, and back); the universe's keep their own. */
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
  const startedAt = Date.now();
  const universe = options.universe && startUniverse(options.seed ?? 1, options.universe, model, servers);

  let last = Date.now();
  let paused = false;
  const ticker = setInterval(() => {
    const now = Date.now();
    universe?.advance(now - startedAt);
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
    universe,
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

/** The universe a simulator of `seed` serves (the same outside it: the demo's chain holds its tokens). */
export function simulatedUniverse(seed: number, options: UniverseOptions): Universe {
  return generateUniverse(seed, listingFormats, options);
}

function startUniverse(seed: number, options: UniverseOptions, model: MarketModel, servers: ReadonlyMap<SimulatedVenueId, SimVenueServer>): LiveUniverse {
  const listings = new Map<string, VenueListing>([...servers].map(([id, server]) => [id, server.listing]));
  return new LiveUniverse(simulatedUniverse(seed, options), seed, model, listings, listingFormats);
}

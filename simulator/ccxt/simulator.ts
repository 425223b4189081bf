// Simulated long-tail venues for the ccxt collector: each file beside this one serves one venue's
// public websocket protocol, in the shape ccxt's class for that venue expects, over the same
// SIMULATED market model as the native venues (simulator/market.ts). Each venue lists the
// markets of its `__fixtures__/<venue>.markets.json`, which the collector receives as ccxt markets.
import type { Exchange } from 'ccxt';
import { MarketModel, simulatedTickers, type ListingSpec } from '../market.ts';
import { SimVenueServer, type VenueProtocol, type VenueServerOptions } from '../venueServer.ts';

/** A ccxt market as the fixtures hold it (ccxt's unified market structure, the fields used here). */
export interface CcxtMarketFixture extends Record<string, unknown> {
  id: string;
  symbol: string;
  base: string;
  quote: string;
  swap: boolean;
  contractSize?: number;
}

export interface CcxtSimVenue {
  /** The ccxt exchange id. */
  ccxt: string;
  markets: readonly CcxtMarketFixture[];
  protocol(server: SimVenueServer): VenueProtocol;
  /** Points an exchange of this venue at a simulator on `wsUrl` (each ccxt class keeps its URLs its own way). */
  pointAt(exchange: Exchange, wsUrl: string): void;
  defaults?: VenueServerOptions;
}

const usd = new Set(['USD', 'USDT', 'USDC']);

/** The fixture markets the model can price (a simulated base, quoted in a USD coin or another simulated asset). */
export function fixtureListings(markets: readonly CcxtMarketFixture[]): ListingSpec[] {
  const priced = new Set(simulatedTickers);
  return markets
    .filter((m) => priced.has(m.base) && (usd.has(m.quote) || priced.has(m.quote)))
    .map((m) => ({ symbol: m.id, base: m.base, quote: m.quote, perpetual: m.swap, contractSize: m.contractSize ?? 1 }));
}

export interface CcxtSimulator {
  server: SimVenueServer;
  /** Stops (and restarts) the market: no trades, no book changes, sockets stay open. */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

/** One simulated ccxt venue on loopback, stepping the market every `tickMs`. */
export async function startCcxtSimulator(
  venue: CcxtSimVenue,
  options: { seed: number; tickers?: readonly string[]; tradesPerSecondPerMarket?: number; liquidationsPerSecondPerMarket?: number; tickMs?: number } & VenueServerOptions,
): Promise<CcxtSimulator> {
  const { seed, tickers, tradesPerSecondPerMarket = 5, liquidationsPerSecondPerMarket, tickMs = 100, ...serverOptions } = options;
  const model = new MarketModel(seed, {
    tradesPerSecondPerMarket,
    ...(liquidationsPerSecondPerMarket === undefined ? {} : { liquidationsPerSecondPerMarket }),
  });
  const listings = fixtureListings(venue.markets).filter((l) => !tickers || tickers.includes(l.base));
  const server = new SimVenueServer(model.listing(venue.ccxt, listings), { ...venue.defaults, ...serverOptions });
  server.protocol = venue.protocol(server);
  await server.listen(0);
  let last = Date.now();
  let paused = false;
  const ticker = setInterval(() => {
    const now = Date.now();
    if (!paused) {
      model.advance(now - last);
      server.tick(last + 1, now);
    }
    last = now;
  }, tickMs);
  return {
    server,
    pause: () => void (paused = true),
    resume: () => void (paused = false),
    async close() {
      clearInterval(ticker);
      await server.close();
    },
  };
}

import { z } from 'zod';

/**
 * The events collectors publish and aggregators consume. Semantics are written down in
 * ingest/EVENTS.md; these schemas are the boundary check on both sides of the bus.
 * Times are unix milliseconds: `ts` is the venue's event time, `receivedAt` our receive time.
 */
const marketFields = {
  venue: z.string().min(1),
  /** The venue's own market symbol, e.g. BTCUSDT. */
  market: z.string().min(1),
  /** Id of the base asset: a catalog id (bitcoin) or a discovered one (notacoin--binance). Also the bus key. */
  asset: z.string().min(1),
  /** Quote currency ticker as the venue writes it, upper case, e.g. USDT. */
  quote: z.string().min(1),
  ts: z.number().int().nonnegative(),
  receivedAt: z.number().int().nonnegative(),
};

const price = z.number().positive();
const quantity = z.number().positive();

export const tradeEvent = z.object({
  type: z.literal('trade'),
  ...marketFields,
  tradeId: z.string().min(1),
  price,
  /** Base-asset quantity. */
  quantity,
  /** Taker side: buy means the aggressor bought. */
  side: z.enum(['buy', 'sell']),
});

/** [price, base quantity], best level first. */
const level = z.tuple([price, quantity]);

export const bookEvent = z.object({
  type: z.literal('book'),
  ...marketFields,
  /** Top of the collector's synchronized book at `ts`. */
  bids: z.array(level),
  asks: z.array(level),
});

export const liquidationEvent = z.object({
  type: z.literal('liquidation'),
  ...marketFields,
  liquidationId: z.string().min(1),
  price,
  quantity,
  /** The position that was closed: a sell order closes a long. */
  positionSide: z.enum(['long', 'short']),
});

/** Longer than any coin's name: anything longer is not one. */
export const maxBaseNameLength = 100;
/** More platforms than a venue lists one token on (KuCoin's USDT: 12 chains, 6 of them ones we map). */
export const maxBaseContracts = 16;
/** Longer than any address we map (EVM 42 characters, Solana up to 44, Tron 34). */
export const maxContractAddressLength = 100;

/** An EVM address: 0x and 20 bytes in hex, either case (EIP-55 checksummed or not). */
export const evmAddressPattern = /^0x[0-9a-fA-F]{40}$/;

/** Where a token is issued: a CoinGecko platform id (`ethereum`, `binance-smart-chain`...) and its contract there. */
export const baseContract = z.object({
  platform: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/).max(40),
  address: z.string().min(1).max(maxContractAddressLength),
});
export type BaseContract = z.infer<typeof baseContract>;

/**
 * Whether the collector is receiving a market's stream: false when the socket that carries it
 * dropped or a reconnect attempt failed, true once a socket carries it again (and once at start).
 * `ts` and `receivedAt` are both our time of the change. The index excludes a market while its
 * last status says disconnected (aggregate/METHODOLOGY.md, `disconnected`).
 */
export const statusEvent = z.object({
  type: z.literal('status'),
  ...marketFields,
  connected: z.boolean(),
  /**
   * The market left the venue's listing: the collector no longer follows it (always with connected
   * false). What retires a discovered asset whose ticker a venue may later give another asset
   * (aggregate/jobs/delistedRetirements.ts).
   */
  delisted: z.literal(true).optional(),
  /** The base asset's full name as the venue lists the market, where the venue gives one: what a discovered asset is called. */
  baseName: z.string().min(1).max(maxBaseNameLength).optional(),
  /** The base token's contracts as the venue's listing gives them, one per platform: a discovered asset's `platforms`. */
  baseContracts: z
    .array(baseContract)
    .min(1)
    .max(maxBaseContracts)
    .refine((cs) => new Set(cs.map((c) => c.platform)).size === cs.length, 'one contract per platform')
    .optional(),
});

/**
 * A span of a market's trades the collector missed, and how far it got them back from the venue's
 * REST history (ingest/historyRecovery.ts): published when it opens (where the venue numbers its
 * trades, so what is missing is known) and when it ends, each a higher `version` of the gap.
 * `ts` and `receivedAt` are our time of that state.
 */
export const gapEvent = z.object({
  type: z.literal('gap'),
  ...marketFields,
  /** Unique within the market. */
  gapId: z.string().min(1),
  version: z.number().int().nonnegative(),
  /** What made it: a skipped trade number, a socket down, a restart, trades the bus refused. */
  cause: z.enum(['sequence', 'reconnect', 'restart', 'overload']),
  state: z.enum(['open', 'recovered', 'partly_recovered', 'unrecoverable']),
  /** Why trades of it are not recovered (or, with `recovered`, that some numbers never were trades). */
  reason: z.enum(['beyond_rest_reach', 'ids_never_traded', 'venue_refused', 'no_rest_history']).optional(),
  /** The last trade known before it and the first after it (or the time it was closed at), unix ms. */
  fromTs: z.number().int().nonnegative(),
  toTs: z.number().int().nonnegative(),
  /** Sequential venues: the trade numbers missing, first and last. */
  fromSeq: z.number().int().nonnegative().optional(),
  toSeq: z.number().int().nonnegative().optional(),
  /** Trades the venue's history gave back for it. */
  recovered: z.number().int().nonnegative(),
  /** Sequential venues: numbers missing, and how many of them the venue's history does not have. */
  missing: z.number().int().nonnegative().optional(),
  absent: z.number().int().nonnegative().optional(),
});

export const marketEvent = z.discriminatedUnion('type', [tradeEvent, bookEvent, liquidationEvent, statusEvent, gapEvent]);

export type TradeEvent = z.infer<typeof tradeEvent>;
export type BookEvent = z.infer<typeof bookEvent>;
export type LiquidationEvent = z.infer<typeof liquidationEvent>;
export type StatusEvent = z.infer<typeof statusEvent>;
export type GapEvent = z.infer<typeof gapEvent>;
export type MarketEvent = z.infer<typeof marketEvent>;

export const topics = ['trades', 'books', 'liquidations', 'statuses', 'gaps'] as const;
export type Topic = (typeof topics)[number];
/** The topics a venue feed carries; `statuses` and `gaps` are the collector's own word on its connections and what it missed. */
export type Channel = Exclude<Topic, 'statuses' | 'gaps'>;
export const channels = ['trades', 'books', 'liquidations'] as const satisfies readonly Channel[];

export type EventOfTopic = { trades: TradeEvent; books: BookEvent; liquidations: LiquidationEvent; statuses: StatusEvent; gaps: GapEvent };

export function topicOf(event: MarketEvent): Topic {
  switch (event.type) {
    case 'trade':
      return 'trades';
    case 'book':
      return 'books';
    case 'liquidation':
      return 'liquidations';
    case 'status':
      return 'statuses';
    case 'gap':
      return 'gaps';
  }
}

export const schemaOfTopic = { trades: tradeEvent, books: bookEvent, liquidations: liquidationEvent, statuses: statusEvent, gaps: gapEvent } as const;

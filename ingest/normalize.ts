// Venue messages to bus events, by the rules of ingest/EVENTS.md: pure conversions that both
// collectors (native and ccxt) and the venue tests share. No I/O here.
import { assetIdForVenueTicker } from '../infra/catalog/catalog.ts';
import { discoveredAssetId } from '../infra/catalog/discovered.ts';
import { identityMapping, type IdentityMapping } from '../infra/catalog/identities.ts';
import type { BookEvent, GapEvent, LiquidationEvent, StatusEvent, TradeEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import { decimalProduct, decimalProductOver } from './decimal.ts';
import type { GapReport } from './historyRecovery.ts';
import type { Level, RawLevel } from './orderBook.ts';
import type { MarketListing, VenueDescriptor, VenueMarket, VenueMessage } from './venue.ts';

type TradeMessage = Extract<VenueMessage, { kind: 'trade' }>;
type LiquidationMessage = Extract<VenueMessage, { kind: 'liquidation' }>;

const positive = (n: number) => Number.isFinite(n) && n > 0;

/** A venue quantity at a price in base units: contracts times base per contract, or for inverse markets contracts times quote per contract over the price. */
export function baseQuantity(market: Pick<MarketListing, 'contractSize' | 'inverse'>, quantity: string, price: string): number {
  return market.inverse ? decimalProductOver(quantity, market.contractSize, price) : decimalProduct(quantity, market.contractSize);
}

/** A listed price and quantity in the asset's own units: a scaled ticker's (unitScale) price per unit, quantity in units. */
function inAssetUnits(market: Pick<VenueMarket, 'contractSize' | 'inverse' | 'unitScale'>, price: string, quantity: string): { price: number; quantity: number } {
  const scale = market.unitScale ?? 1;
  return { price: Number(price) / scale, quantity: baseQuantity(market, quantity, price) * scale };
}

/** A venue trade as our event: quantity in base units (contracts converted exactly), undefined when malformed. */
export function toTradeEvent(venue: string, market: VenueMarket, t: TradeMessage, receivedAt: number): TradeEvent | undefined {
  const { price, quantity } = inAssetUnits(market, t.price, t.quantity);
  if (!positive(price) || !positive(quantity) || !Number.isSafeInteger(t.ts) || t.ts < 0 || t.tradeId === '') return undefined;
  return {
    type: 'trade',
    venue,
    market: market.symbol,
    asset: market.asset,
    quote: market.quote,
    tradeId: t.tradeId,
    price,
    quantity,
    side: t.side,
    ts: t.ts,
    receivedAt,
  };
}

export function toLiquidationEvent(venue: string, market: VenueMarket, l: LiquidationMessage, receivedAt: number): LiquidationEvent | undefined {
  const { price, quantity } = inAssetUnits(market, l.price, l.quantity);
  const ts = l.ts ?? receivedAt;
  if (!positive(price) || !positive(quantity) || !Number.isSafeInteger(ts) || ts < 0 || l.liquidationId === '') return undefined;
  return {
    type: 'liquidation',
    venue,
    market: market.symbol,
    asset: market.asset,
    quote: market.quote,
    liquidationId: l.liquidationId,
    price,
    quantity,
    positionSide: l.positionSide,
    ts,
    receivedAt,
  };
}

/**
 * How far a venue's event time may lie before or after our receive time (ingest/EVENTS.md): an
 * older one would make the sink's duplicate lookup scan the asset's history, a later one is a
 * clock or parse error. A day covers recent-trade replays on reconnect; a minute, clock skew.
 */
export const eventTimeBounds = { beforeMs: 86_400_000, afterMs: 60_000 };

/**
 * Whether an event's venue time is within the bounds around its receive time. The first event a
 * collector refuses is logged with a sample (the others are counted as unknown messages).
 */
export function eventTimeCheck(log: Logger): (event: { market: string; ts: number; receivedAt: number }) => boolean {
  let logged = false;
  return ({ market, ts, receivedAt }) => {
    if (ts >= receivedAt - eventTimeBounds.beforeMs && ts <= receivedAt + eventTimeBounds.afterMs) return true;
    if (!logged) {
      logged = true;
      log.warn({ market, ts, receivedAt, bounds: eventTimeBounds }, 'event time implausibly far from its receipt: refused (further ones only counted as unknown)');
    }
    return false;
  };
}

/** The connection status of markets, as published on the `statuses` topic; `delisted`: they left the venue's listing. */
export function statusEvents(venue: string, markets: readonly VenueMarket[], connected: boolean, at: number, delisted = false): StatusEvent[] {
  return markets.map((m) => ({
    type: 'status',
    venue,
    market: m.symbol,
    asset: m.asset,
    quote: m.quote,
    ts: at,
    receivedAt: at,
    connected: connected && !delisted,
    ...(delisted ? { delisted: true as const } : {}),
    ...(m.baseName ? { baseName: m.baseName } : {}),
    ...(m.baseContracts ? { baseContracts: m.baseContracts } : {}),
  }));
}

/**
 * A gap's state as our event: `open` is its first version, an end its second; a gap a previous run
 * left (recovered again after a restart) counts on from the versions it has.
 */
export function toGapEvent(venue: string, market: VenueMarket, report: GapReport, at: number): GapEvent {
  const { gap } = report;
  return {
    type: 'gap',
    venue,
    market: market.symbol,
    asset: market.asset,
    quote: market.quote,
    ts: at,
    receivedAt: at,
    gapId: report.gapId,
    version: (gap.versionBase ?? 0) + (report.state === 'open' ? 1 : 2),
    cause: gap.cause,
    state: report.state,
    ...(report.reason === undefined ? {} : { reason: report.reason }),
    fromTs: gap.after.ts,
    toTs: gap.until.ts,
    ...(gap.missing ? { fromSeq: gap.missing.first, toSeq: gap.missing.last } : {}),
    recovered: report.recovered,
    ...(report.missing === undefined ? {} : { missing: report.missing }),
    ...(report.absent === undefined ? {} : { absent: report.absent }),
  };
}

/**
 * A book top as our event: levels whose price or quantity is not a positive finite number are left
 * out; undefined when a side is left empty or the venue time is not a unix millisecond. With the
 * checks of the trades and liquidations above, this is what keeps a malformed event off the
 * in-process bus, which does not check schemas (the Kafka boundary does).
 */
export function toBookEvent(venue: string, market: VenueMarket, levels: { bids: readonly Level[]; asks: readonly Level[] }, ts: number, receivedAt: number): BookEvent | undefined {
  const valid = (side: readonly Level[]) => side.filter(([price, quantity]) => positive(price) && positive(quantity));
  const bids = valid(levels.bids);
  const asks = valid(levels.asks);
  if (bids.length === 0 || asks.length === 0 || !Number.isSafeInteger(ts) || ts < 0) return undefined;
  return { type: 'book', venue, market: market.symbol, asset: market.asset, quote: market.quote, ts, receivedAt, bids, asks };
}

/** Book levels in base units (a scaled ticker's in units of the asset, as its trades). */
export function toLevels(raw: readonly RawLevel[], market: Pick<VenueMarket, 'contractSize' | 'inverse' | 'unitScale'>): Level[] {
  return raw.map(([p, q]) => {
    const { price, quantity } = inAssetUnits(market, p, q);
    return [price, quantity];
  });
}

/** Which listings become markets: only `assets` when the operator chose some; `discover` collects bases the catalog does not map. */
export interface MarketSelection {
  assets?: ReadonlySet<string> | undefined;
  discover?: boolean | undefined;
  /** The operator's identity decisions (infra/catalog/identities.ts); tests hand in their own. */
  identities?: ((venue: string, ticker: string) => IdentityMapping | undefined) | undefined;
}

/**
 * The markets to follow: quoted in one of the venue's followed quotes, base asset in the catalog's
 * explicit venue table or the operator's identities file (and in `assets`, when the operator chose
 * some). A base neither maps is listed as unmapped, never guessed; with `discover` (and no `assets`)
 * it is collected too, as the discovered asset of that venue and ticker (infra/catalog/discovered.ts).
 */
export function selectMarkets(
  venue: Pick<VenueDescriptor, 'id' | 'quotes'>,
  listings: readonly MarketListing[],
  selection: MarketSelection = {},
): { markets: VenueMarket[]; unmapped: string[] } {
  const { assets, discover, identities = identityMapping } = selection;
  const markets = new Map<string, VenueMarket>();
  const unmapped = new Set<string>();
  for (const l of listings) {
    if (!venue.quotes.includes(l.quote) || markets.has(l.symbol)) continue;
    const mapped = assetIdForVenueTicker(venue.id, l.base);
    // The operator's identities (infra/catalog/identities.ts) decide a ticker the catalog's table does not.
    const decided = mapped ? undefined : identities(venue.id, l.base);
    if (!mapped && !decided) unmapped.add(l.symbol);
    const asset = mapped ?? decided?.asset ?? (discover && !assets ? discoveredAssetId(venue.id, l.base) : undefined);
    if (!asset || (assets && !assets.has(asset))) continue;
    markets.set(l.symbol, decided && decided.scale !== 1 && !l.inverse ? { ...l, asset, unitScale: decided.scale } : { ...l, asset });
  }
  return { markets: [...markets.values()], unmapped: [...unmapped].sort() };
}

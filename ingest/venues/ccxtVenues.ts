// The long tail: every ccxt exchange whose websocket layer (ccxt.pro, https://docs.ccxt.com/#/ccxt.pro.manual)
// streams public trades and that no native collector covers, collected by ingest/ccxtCollector.ts.
// One venue id per exchange and market kind: `<ccxt id>` for spot, `<ccxt id>-swap` for linear
// perpetuals. The list itself is generated into infra/catalog/ccxt-venues.json from ccxt's own
// descriptions (writeCcxtCatalog.ts); this file holds the judgement ccxt cannot give: which
// exchanges a native collector already covers, which are left out and why, and per-venue settings.
import { ccxtCatalogVenue, ccxtCatalogVenues, type CcxtCatalogVenue } from '../../infra/catalog/ccxtCatalog.ts';
import type { Channel } from '../../infra/events.ts';

type Contract = CcxtCatalogVenue['contract'];

interface CcxtPolicy {
  /** The native venue that collects this exchange's markets of a kind: that kind is not collected through ccxt once it exists. */
  native?: Partial<Record<Contract, string>>;
  /** Why the exchange is not collected at all. */
  skip?: string;
  /** Why one of its market kinds is not collected. */
  skipKind?: Partial<Record<Contract, string>>;
  /** Display name, where ccxt's describe() has none. */
  name?: string;
  /** Quote currencies followed besides USD, USDT and USDC (fiat-only venues). */
  quotes?: readonly string[];
  /**
   * What ccxt's liquidation `side` means on this venue: ccxt passes each venue's field through, and
   * venues disagree (an order side on Binance and OKX, the position side on Bybit). Liquidations are
   * collected only where this is declared.
   */
  liquidationSide?: 'order' | 'position';
}

const sameBook = (of: string) => `regional entity of ${of}: a shared order book is not ruled out, so it would count the same trades twice`;

/** Only exchanges that need a rule are listed; every other ccxt.pro exchange with watchTrades is collected as it is. */
export const ccxtPolicies: Readonly<Record<string, CcxtPolicy>> = {
  // Native collectors (ingest/venues/*.ts), present or planned in the venues issue.
  binance: { native: { spot: 'binance', perpetual: 'binance-futures' } },
  binanceusdm: { native: { perpetual: 'binance-futures' } },
  okx: { native: { spot: 'okx', perpetual: 'okx-swap' } },
  bybit: { native: { spot: 'bybit', perpetual: 'bybit-linear' } },
  coinbase: { native: { spot: 'coinbase' }, skipKind: { perpetual: "Coinbase's perpetuals are Coinbase International's, whose feed needs API keys" } },
  kraken: { native: { spot: 'kraken' } },
  bitstamp: { native: { spot: 'bitstamp' } },
  gate: { native: { spot: 'gate' } },
  bitfinex: { native: { spot: 'bitfinex', perpetual: 'bitfinex-derivatives' } },
  kucoin: { native: { spot: 'kucoin' }, skipKind: { perpetual: "KuCoin's perpetuals are the same markets as kucoinfutures-swap" } },
  deribit: { native: { perpetual: 'deribit' } },
  // Not in ccxt since 4.5.83 (ccxt 4.5.84 has no bitmex); named so a ccxt that brings it back does not collect it twice.
  bitmex: { native: { perpetual: 'bitmex' } },
  // Not collected.
  coinbaseexchange: { skip: "the same order book as Coinbase Advanced Trade (native 'coinbase')" },
  myokx: { skip: sameBook('OKX') },
  okxus: { skip: sameBook('OKX') },
  bybiteu: { skip: sameBook('Bybit') },
  bybitid: { skip: sameBook('Bybit') },
  gateeu: { skip: sameBook('Gate') },
  bequant: { skip: "runs HitBTC's matching engine: a shared order book with hitbtc is not ruled out" },
  modetrade: { skip: "a front end of the Orderly network, whose order book woofipro already streams" },
  binancecoinm: { skip: 'inverse (coin-margined) contracts only: quantities are not base units' },
  alpaca: { skip: 'its market data stream needs API keys' },
  luno: { skip: 'its trade stream needs API keys' },
  coinbaseinternational: { skip: 'its market data stream needs API keys' },
  // Settings.
  aster: { name: 'Aster' },
  upbit: { quotes: ['KRW'] },
  bithumb: { quotes: ['KRW'] },
  coinone: { quotes: ['KRW'] },
  coincheck: { quotes: ['JPY'] },
  bittrade: { quotes: ['JPY'] },
  bitvavo: { quotes: ['EUR'] },
  bitopro: { quotes: ['TWD'] },
  independentreserve: { quotes: ['AUD'] },
  ndax: { quotes: ['CAD'] },
  // ccxt's side is the taker side of the liquidation trade, i.e. the forced order (unverified with the venue's docs).
  lighter: { liquidationSide: 'order' },
};

const followedQuotes = ['USDT', 'USDC', 'USD'] as const;

/** A ccxt venue as the collector runs it: its catalog row plus the settings above. */
export interface CcxtVenue extends CcxtCatalogVenue {
  quotes: readonly string[];
  liquidationSide?: 'order' | 'position';
}

const venueIdOf = (ccxtId: string, contract: Contract) => (contract === 'spot' ? ccxtId : `${ccxtId}-swap`);

/** The part of a ccxt exchange instance the catalog is derived from. */
export interface CcxtDescription {
  id: string;
  name?: string;
  countries?: string[];
  urls: { www?: string | string[]; logo?: string; doc?: string | string[] };
  has: Record<string, boolean | 'emulated' | undefined>;
}

export interface DerivedCcxtCatalog {
  venues: CcxtCatalogVenue[];
  /** ccxt exchanges (or kinds) with websocket trades left out, and why. */
  left: { ccxt: string; contract?: Contract; reason: string }[];
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * The ccxt venues from the installed ccxt: one per exchange with websocket trades and market kind it
 * lists (spot; swaps, collected when linear), minus what `ccxtPolicies` leaves out or a native
 * venue in `nativeIds` covers.
 */
export function deriveCcxtCatalog(exchanges: readonly CcxtDescription[], nativeIds: ReadonlySet<string>): DerivedCcxtCatalog {
  const venues: CcxtCatalogVenue[] = [];
  const left: DerivedCcxtCatalog['left'] = [];
  for (const ex of [...exchanges].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const has = ex.has;
    if (!has.watchTrades && !has.watchTradesForSymbols) continue;
    const policy = ccxtPolicies[ex.id] ?? {};
    if (policy.skip) {
      left.push({ ccxt: ex.id, reason: policy.skip });
      continue;
    }
    const kinds: Contract[] = [];
    if (has.spot) kinds.push('spot');
    if (has.swap) kinds.push('perpetual');
    for (const contract of kinds) {
      const native = policy.native?.[contract];
      const skipped = policy.skipKind?.[contract];
      if (native && nativeIds.has(native)) {
        left.push({ ccxt: ex.id, contract, reason: `collected natively as '${native}'` });
        continue;
      }
      if (skipped) {
        left.push({ ccxt: ex.id, contract, reason: skipped });
        continue;
      }
      const channels: Channel[] = ['trades'];
      if (has.watchOrderBook || has.watchOrderBookForSymbols) channels.push('books');
      if (contract === 'perpetual' && policy.liquidationSide && (has.watchLiquidationsForSymbols || has.watchLiquidations)) channels.push('liquidations');
      const logo = ex.urls.logo;
      const docs = first(ex.urls.doc);
      const name = policy.name ?? ex.name;
      // Two rows of one exchange must not read alike in the exchange list.
      const displayName = contract === 'perpetual' && kinds.length > 1 ? `${name} Perpetuals` : name;
      venues.push(
        ccxtCatalogVenue.parse({
          id: venueIdOf(ex.id, contract),
          ccxt: ex.id,
          contract,
          name: displayName,
          countries: ex.countries ?? [],
          url: first(ex.urls.www),
          ...(logo ? { logo } : {}),
          ...(docs ? { docs } : {}),
          channels,
        }),
      );
    }
  }
  return { venues, left };
}

/** The ccxt venues to offer beside these native ones (a native venue wins over a stale catalog entry). */
export function ccxtVenuesBeside(nativeIds: ReadonlySet<string>): CcxtVenue[] {
  return ccxtCatalogVenues
    .filter((v) => {
      const native = ccxtPolicies[v.ccxt]?.native?.[v.contract];
      return !nativeIds.has(v.id) && !(native && nativeIds.has(native));
    })
    .map((v) => {
      const policy = ccxtPolicies[v.ccxt] ?? {};
      return { ...v, quotes: [...followedQuotes, ...(policy.quotes ?? [])], ...(policy.liquidationSide ? { liquidationSide: policy.liquidationSide } : {}) };
    });
}

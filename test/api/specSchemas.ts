// JSON Schemas of the API's responses, written by hand from the spec
// (../shared/spec/market-data-api.md), section by section: the oracle the responses are checked
// against, independent of the zod schemas the routes validate with and the OpenAPI document
// generated from them. Nothing here imports from api/ (test/layers.test.ts checks it).
//
// Reading of the spec: the field tables of section 2 and the objects of 2.9 list their fields
// exhaustively (`additionalProperties: false`); where the spec leaves inner fields out ("Gaps"),
// the schema says nothing about them. Fields we serve beyond the spec are added below one by one,
// each marked `beyondSpec` with why, so any other extra or renamed field fails.

/** A JSON Schema (draft 2020-12), as ajv compiles it. */
export type JsonSchema = Record<string, unknown>;

const string = { type: 'string' } as const;
const number = { type: 'number' } as const;
const integer = { type: 'integer' } as const;
const boolean = { type: 'boolean' } as const;
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
const array = (items: JsonSchema): JsonSchema => ({ type: 'array', items });
/** 'ISO 8601 timestamp' (ajv has no formats without ajv-formats: a pattern says the same). */
const isoTimestamp = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2})$' } as const;
/** 'date (YYYY-MM-DD)'. */
const isoDate = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } as const;
/** 'unix ms': an integer count of milliseconds, after 2001 (a seconds value would fail). */
const unixMs = { type: 'integer', minimum: 1e12 } as const;

/** An object with exactly these fields, every one required, and optionally the `beyondSpec` fields of `extensions`. */
function exactly(properties: Record<string, JsonSchema>, extensions: Record<string, JsonSchema> = {}): JsonSchema {
  return { type: 'object', properties: { ...properties, ...extensions }, required: Object.keys(properties), additionalProperties: false };
}
/** An object with at least these fields (the spec does not list them all). */
function atLeast(properties: Record<string, JsonSchema>): JsonSchema {
  return { type: 'object', properties, required: Object.keys(properties) };
}
/** An object of any keys to values of `values`. */
const mapOf = (values: JsonSchema): JsonSchema => ({ type: 'object', additionalProperties: values });
/** An object with exactly the keys `keys`, each a `values`. */
const keyedBy = (keys: readonly string[], values: JsonSchema) => exactly(Object.fromEntries(keys.map((k) => [k, values])));
/** A field we serve that the spec does not have, with the reason it is there. */
const beyondSpec = (schema: JsonSchema, why: string): JsonSchema => ({ ...schema, $comment: `beyond the spec: ${why}` });
/** Where the spec and our reading of an unstated case differ: allowed, named, reported. */
const deviation = (schema: JsonSchema, why: string): JsonSchema => ({ ...schema, $comment: `deviates from the spec: ${why}` });
const sourceField = beyondSpec(string, 'names where the numbers come from, and says when they are simulated (README, "Everything the demo serves is simulated, and says so")');
const simulatedField = beyondSpec(boolean, 'true when the data is simulated demo data (README)');
/** README: "rate (units per USD) is in every response that converts, and source/rateSource say where it came from". */
const rateField = beyondSpec(number, 'units of the served currency per USD (README, API)');
const rateSourceField = beyondSpec(string, 'where the rate comes from (README, API)');
/** ohlc and chart convert each candle or point at the rate of its own time and list those rates (api/currency.ts rateRuns). */
const rateRunsField = beyondSpec({ type: 'array' }, 'the rates applied, each from the first bucket it applies to');
/** README: a window that holds a gap of missed trades we could not recover says so, and names its spans. */
const gapsField = beyondSpec(
  array(exactly({ venue: string, market: string, from: unixMs, to: unixMs, state: { enum: ['open', 'partly_recovered', 'unrecoverable'] } }, { reason: string })),
  'the unrecovered gaps of missed trades in the window (README, complete history)',
);
const ohlcCoverageField = beyondSpec({ enum: ['full', 'partial'] }, 'partial when the candles hold an unrecovered gap (README), as chart says');

// ---- 7. Errors -------------------------------------------------------------------------------

/** Section 7: `{ error: { code, message, status } }`; the field types are not shown: the README's (string, string, the HTTP status). */
export function errorSchema(status: number, codes: readonly string[]): JsonSchema {
  return exactly({ error: exactly({ code: { enum: codes }, message: string, status: { const: status } }) });
}

/** Section 7's table: the codes of each status. 405 is not in the spec (every endpoint is GET): ours, method_not_allowed. */
export const errorCodesByStatus: Record<number, readonly string[]> = {
  400: ['bad_request'],
  401: ['missing_key', 'invalid_key'],
  404: ['not_found'],
  405: ['method_not_allowed'],
  429: ['quota_exceeded'],
  503: ['unavailable'],
};

// ---- 2. Resources ----------------------------------------------------------------------------

/** 2.1 Coin row. */
const coinRowFields: Record<string, JsonSchema> = {
  id: string,
  symbol: string,
  name: string,
  image: string,
  current_price: number,
  market_cap: number,
  fully_diluted_valuation: number,
  total_volume: number,
  high_24h: number,
  low_24h: number,
  market_cap_rank: integer,
  price_change_percentage_1h_in_currency: number,
  price_change_percentage_24h_in_currency: number,
  price_change_percentage_7d_in_currency: number,
  price_change_percentage_30d_in_currency: number,
  circulating_supply: number,
  total_supply: number,
  max_supply: nullable(number),
  measured: boolean,
  ath: number,
  atl: number,
  ath_change_percentage: number,
  atl_change_percentage: number,
  ath_date: isoTimestamp,
};
export const coinRow = exactly(coinRowFields);
/** 2.1 with sparkline requested: one more field, "a 7-day hourly price array" whose name (and so its wrapping) is a gap. */
export const coinRowWithSparkline: JsonSchema = {
  type: 'object',
  properties: coinRowFields,
  required: Object.keys(coinRowFields),
  minProperties: Object.keys(coinRowFields).length + 1,
  maxProperties: Object.keys(coinRowFields).length + 1,
};

/** 2.2: the value maps carry usd, ars, brl, sek; the date maps the 24 keys listed. */
const valueCurrencies = ['usd', 'ars', 'brl', 'sek'] as const;
const dateCurrencies = ['usd', 'ars', 'brl', 'sek', 'sgd', 'thb', 'try', 'twd', 'uah', 'vnd', 'zar', 'eth', 'aed', 'aud', 'bdt', 'cad', 'chf', 'clp', 'cny', 'czk', 'dkk', 'eur', 'gbp', 'hkd'] as const;
const valueMap = keyedBy(valueCurrencies, number);
const dateMap = keyedBy(dateCurrencies, isoTimestamp);

/** 2.2 Coin profile. */
export const coinProfile = exactly({
  id: string,
  symbol: string,
  name: string,
  categories: array(string),
  description: exactly({ en: string }),
  image: exactly({ thumb: string, small: string, large: string }),
  links: exactly({
    chat_url: { type: 'array' },
    homepage: array(string),
    repos_url: exactly({ github: array(string), bitbucket: { type: 'array' } }),
    whitepaper: string,
    snapshot_url: nullable(string),
    subreddit_url: string,
    blockchain_site: array(string),
    announcement_url: { type: 'array' },
    facebook_username: string,
    official_forum_url: array(string),
    twitter_screen_name: string,
    telegram_channel_identifier: string,
    bitcointalk_thread_identifier: nullable(string),
  }),
  platforms: mapOf(string),
  detail_platforms: mapOf(exactly({ decimal_place: nullable(string), contract_address: string })),
  hashing_algorithm: string,
  genesis_date: isoDate,
  market_cap_rank: integer,
  watchlist_portfolio_users: integer,
  price_source: string,
  price_stats: exactly({
    observed_since: isoTimestamp,
    ranges: array(exactly({ key: string, label: string, low: valueMap, high: valueMap })),
    high_all: valueMap,
    low_all: valueMap,
    high_all_at: isoTimestamp,
    low_all_at: isoTimestamp,
  }),
  market_data: exactly({
    current_price: valueMap,
    market_cap: valueMap,
    fully_diluted_valuation: valueMap,
    total_volume: valueMap,
    high_24h: valueMap,
    low_24h: valueMap,
    ...Object.fromEntries(['1h', '24h', '7d', '14d', '30d', '1y'].map((w) => [`price_change_percentage_${w}_in_currency`, valueMap])),
    ath: valueMap,
    ath_change_percentage: valueMap,
    atl: valueMap,
    atl_change_percentage: valueMap,
    ath_date: dateMap,
    atl_date: dateMap,
    circulating_supply: number,
    total_supply: number,
    // 2.2 types it "number", 2.1 "number or null" for the same figure: an asset without a maximum
    // (ethereum) has none to give, so null as in 2.1 (a spec inconsistency, reported).
    max_supply: nullable(number),
    supply_source: string,
    market_cap_change_percentage_24h: number,
  }),
});

/** 2.3 Candle. */
const candle = exactly({ timestamp: unixMs, open: number, high: number, low: number, close: number, volume: number });

/** 2.4 Market. */
const market = exactly({
  venueId: string,
  venue: string,
  pair: string,
  quote: string,
  price: number,
  volume24h: number,
  share: number,
  contract: { enum: ['spot', 'perpetual'] },
  excluded: boolean,
  excludeReason: nullable(string),
  updatedAt: unixMs,
  spreadBps: nullable(number),
  depthBid: nullable(number),
  depthAsk: nullable(number),
  depthBid1: nullable(number),
  depthAsk1: nullable(number),
  liquidityScore: nullable(number),
  costBuy: nullable(mapOf(number)),
  costSell: nullable(mapOf(number)),
});

/** 2.5 Price entry. */
const priceEntry = exactly({ assetId: string, symbol: string, price: number, change24h: number, measured: boolean, updatedAt: unixMs });

/** 2.6 Chain row. */
const chainRow = exactly({
  id: string,
  name: string,
  volume24h: number,
  swaps24h: number,
  pools24h: number,
  dexes24h: number,
  poolsIndexed: integer,
  tokensIndexed: integer,
  volumeChange24h: nullable(number),
  volumeChange7d: nullable(number),
});

/** 2.7 Category row. */
const categoryRow = exactly({
  id: string,
  name: string,
  market_cap: number,
  market_cap_change_24h: number,
  market_cap_change_7d: number,
  volume_24h: number,
  dominance: number,
  asset_count: number,
  top_3_coins: { ...array(string), maxItems: 3 },
  top_3_coins_id: { ...array(string), maxItems: 3 },
});

/** 2.8 New coin: the spec names the fields, not their types. */
const newCoin = exactly(Object.fromEntries(['id', 'symbol', 'name', 'image', 'listedAt', 'firstVenue', 'price', 'changeSinceListing', 'volume24h', 'measured'].map((f) => [f, {}])));

// ---- 4. Endpoints: the 200 body of each -------------------------------------------------------

/** Spec paths (section 4) to the schema of their 200 body. */
export const responseSchemas: Record<string, JsonSchema> = {
  // 4.2
  '/v1/coins': exactly({ coins: array(coinRow), page: integer, limit: integer, offset: integer, at: isoTimestamp }),
  // 4.3
  '/v1/coins/{id}': coinProfile,
  // 4.4
  '/v1/coins/{id}/ohlc': exactly({ candles: array(candle), source: string, rate: number, currency: string }, { rates: rateRunsField, coverage: ohlcCoverageField, gaps: gapsField }),
  // 4.5
  '/v1/coins/{id}/chart': exactly({
    id: string,
    range: { enum: ['1h', '24h', '7d', '30d', '90d', '1y', 'max'] },
    metric: { enum: ['price', 'market_cap'] },
    currency: string,
    coverage: { enum: ['full', 'partial'] },
    points: array({ type: 'array', prefixItems: [unixMs, number], items: false, minItems: 2 }),
  }, { rates: rateRunsField, gaps: gapsField }),
  // 4.6
  '/v1/coins/{id}/markets': exactly({ markets: array(market), currency: string, at: unixMs }, { rate: rateField, rateSource: rateSourceField }),
  // 4.7
  '/v1/prices': exactly({ prices: array(priceEntry), at: unixMs }),
  // 4.8: the exchange row's fields are a gap; markets[] is named.
  '/v1/exchanges/{id}': exactly({ exchange: atLeast({ markets: { type: 'array', items: { type: 'object' } } }), at: unixMs }),
  // 4.9, 2.9 Global
  '/v1/global': exactly({
    active_cryptocurrencies: integer,
    markets: integer,
    total_market_cap: mapOf(number),
    total_volume: mapOf(number),
    market_cap_percentage: mapOf(number),
    market_cap_change_percentage_24h_usd: number,
  }),
  // 4.10
  '/v1/chains': exactly({ chains: array(chainRow) }),
  // 4.11: an array at the top level.
  '/v1/categories': array(categoryRow),
  // 4.12: stats' fields are a gap.
  '/v1/new-coins': exactly({ coins: array(newCoin), stats: { type: 'object' } }),
  // 4.13, 2.9 ETF flows: the inner fields are a gap, the names funds, days and grid are given.
  '/v1/etf-flows': exactly({
    assets: { ...array(atLeast({ funds: {}, days: {}, grid: {} })), minItems: 3, maxItems: 3 },
    asOf: string,
    updatedAt: number,
  }, { simulated: simulatedField }),
  // 4.14, 2.9 Market status: basket and altcoinSeason are described by what they hold, not field by field.
  '/v1/market-status': exactly({
    basket: atLeast({ up: integer, down: integer, flat: integer }),
    marketCapChange24h: number,
    volumeChange24h: number,
    btcSharePointsChange24h: number,
    altcoinSeason: atLeast({
      score: deviation(nullable({ type: 'number', minimum: 0, maximum: 100 }), 'null while too few assets have the window\'s history (the spec has no such case)'),
      label: deviation(nullable(string), 'null with the score'),
    }),
    asOf: isoTimestamp,
  }),
  // 4.15, 2.9 Fear and greed: the readings' inner fields are a gap.
  '/v1/fear-greed/history': exactly({
    current: { type: 'object' },
    series: array(exactly({ date: string, score: integer })),
    lastMonth: { type: 'object' },
    high: { type: 'object' },
    low: { type: 'object' },
  }, { source: sourceField }),
  // 4.16, 2.9 Liquidations: the inner fields of bars, assets, venues, events and highlights are a gap, except that bars carry long and short.
  '/v1/liquidations': exactly({
    long: number,
    short: number,
    total: number,
    previousTotal: number,
    bars: array(atLeast({ long: number, short: number })),
    assets: { type: 'array' },
    venues: { type: 'array' },
    events: { type: 'array' },
    highlights: {},
    updatedAt: unixMs,
  }, { from: beyondSpec(unixMs, 'start of the window covered'), to: beyondSpec(unixMs, 'end of the window covered (exclusive)') }),
};

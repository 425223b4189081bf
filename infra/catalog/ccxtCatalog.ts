// The long-tail venues collected through ccxt, and their ticker tables. Both files are GENERATED from
// the installed ccxt by `node ingest/venues/writeCcxtCatalog.ts` (which says why each exchange is in
// or out); edit the policy there, not the JSON. catalog.ts merges them into the venue catalog.
import { z } from 'zod';
import { channels } from '../events.ts';
import ccxtVenueAssetsJson from './ccxt-venue-assets.json' with { type: 'json' };
import ccxtVenuesJson from './ccxt-venues.json' with { type: 'json' };

const webUrl = z.url({ protocol: /^https?$/ });

/** One venue id per ccxt exchange and market kind: `bitget` (spot), `bitget-swap` (linear perpetuals). */
export const ccxtCatalogVenue = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/),
  /** The ccxt exchange id (`ccxt.pro[ccxt]`). */
  ccxt: z.string().regex(/^[a-z0-9]+$/),
  contract: z.enum(['spot', 'perpetual']),
  /** From ccxt's describe(): name, countries (ISO 3166 codes), web site, logo, API docs. */
  name: z.string().min(1),
  countries: z.array(z.string().min(2)),
  url: webUrl,
  logo: webUrl.optional(),
  docs: webUrl.optional(),
  channels: z.array(z.enum(channels)).min(1),
});
export type CcxtCatalogVenue = z.infer<typeof ccxtCatalogVenue>;

export const ccxtCatalogVenues: readonly CcxtCatalogVenue[] = z.array(ccxtCatalogVenue).parse(ccxtVenuesJson);

/**
 * ccxt unified currency code -> catalog id, for every ccxt venue. The keys are ccxt's codes, not the
 * venues' raw tickers: ccxt renames, per exchange, a ticker that means another asset there than the
 * common one (Upbit's TON is Tokamak Network, and ccxt calls it so), which is the per-venue check a
 * bare ticker would lack. The table is the one every native venue shares in venue-assets.json.
 */
const ccxtTickerTable = z.strictObject({ tickers: z.record(z.string().min(1), z.string().regex(/^[a-z0-9-]+$/)) });

const { tickers } = ccxtTickerTable.parse(ccxtVenueAssetsJson);

/** Per ccxt venue id: its ticker -> catalog id table, as catalog.ts's venue look-up reads it. */
export const ccxtVenueAssets: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.fromEntries(ccxtCatalogVenues.map((v) => [v.id, tickers]));

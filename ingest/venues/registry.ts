// Every native venue, best-served first. A venue is one file beside this one; adding it here is
// what makes `ingest --venues <id>` and `ingest --list-venues` know it.
import { ConfigError } from '../../infra/config.ts';
import { venueEnvName, type VenueDescriptor } from '../venue.ts';
import { binance } from './binance.ts';
import { binanceFutures } from './binance-futures.ts';
import { bitfinex, bitfinexDerivatives } from './bitfinex.ts';
import { bitmex } from './bitmex.ts';
import { bitstamp } from './bitstamp.ts';
import { bybit, bybitLinear } from './bybit.ts';
import { coinbase } from './coinbase.ts';
import { deribit } from './deribit.ts';
import { gate } from './gate.ts';
import { kraken } from './kraken.ts';
import { kucoin } from './kucoin.ts';
import { okx, okxSwap } from './okx.ts';
import { ccxtVenuesBeside, type CcxtVenue } from './ccxtVenues.ts';

export const nativeVenues: readonly VenueDescriptor[] = [binance, binanceFutures, okx, okxSwap, bybit, bybitLinear, coinbase, kraken, bitstamp, bitfinex, bitfinexDerivatives, gate, deribit, kucoin, bitmex];

const byId = new Map(nativeVenues.map((v) => [v.id, v]));

export function findNativeVenue(id: string): VenueDescriptor | undefined {
  return byId.get(id);
}

/** The long tail, collected through ccxt (ingest/ccxtCollector.ts): every ccxt venue no native one covers. */
export const ccxtVenues: readonly CcxtVenue[] = ccxtVenuesBeside(new Set(byId.keys()));
const ccxtById = new Map(ccxtVenues.map((v) => [v.id, v]));

export function findCcxtVenue(id: string): CcxtVenue | undefined {
  return ccxtById.get(id);
}

const named = (list: string) => list.split(',').map((id) => id.trim());
/** `--venues ccxt` stands for every ccxt venue. */
const allCcxt = 'ccxt';

/** The venues `--venues a,b` names (every native venue when unset); an unknown id is a ConfigError listing the known ones. */
export function selectVenues(list: string | undefined): VenueDescriptor[] {
  if (!list) return [...nativeVenues];
  return named(list)
    .filter((id) => id !== allCcxt && !findCcxtVenue(id))
    .map((id) => {
      const venue = findNativeVenue(id);
      if (!venue) throw new ConfigError(`--venues: unknown venue "${id}"; supported: ${[...nativeVenues, ...ccxtVenues].map((v) => v.id).join(', ')}, or ${allCcxt} for every ccxt venue`);
      return venue;
    });
}

/** The ccxt venues `--venues` names (none when unset: they run when asked for, `ccxt` meaning all of them). */
export function selectCcxtVenues(list: string | undefined): CcxtVenue[] {
  if (!list) return [];
  const ids = named(list);
  return ids.includes(allCcxt) ? [...ccxtVenues] : ids.flatMap((id) => findCcxtVenue(id) ?? []);
}

/** What `ingest --list-venues` prints: one line per venue with its channels, how it is collected and its overrides. */
export function venueTable(): string {
  const rows = nativeVenues.map((v) => [
    v.id,
    v.name,
    v.contract,
    v.channels.join(',') + (v.liquidations?.sampled ? ' (liquidations sampled)' : ''),
    'native',
    `${venueEnvName(v.id, 'WS')}, ${venueEnvName(v.id, 'REST')}`,
  ]);
  rows.push(...ccxtVenues.map((v) => [v.id, v.name, v.contract, v.channels.join(','), `ccxt (${v.ccxt})`, '']));
  const header = ['venue', 'name', 'contract', 'channels', 'collector', 'endpoint overrides'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

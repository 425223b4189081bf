import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { assetIdForVenueTicker, catalogVenues, findVenue } from '../../infra/catalog/catalog.ts';
import { ConfigError } from '../../infra/config.ts';
import { ccxtPolicies } from '../venues/ccxtVenues.ts';
import { ccxtVenues, findCcxtVenue, nativeVenues, selectCcxtVenues, selectVenues, venueTable } from '../venues/registry.ts';
import { ccxtCatalogFiles } from '../venues/writeCcxtCatalog.ts';

test('the ccxt catalog files are what the installed ccxt and the native venues give (regenerate: node ingest/venues/writeCcxtCatalog.ts)', async () => {
  const { venues, assets, derived } = await ccxtCatalogFiles();
  expect(readFileSync(new URL('../../infra/catalog/ccxt-venues.json', import.meta.url), 'utf8')).toBe(venues);
  expect(readFileSync(new URL('../../infra/catalog/ccxt-venue-assets.json', import.meta.url), 'utf8')).toBe(assets);
  // Every exchange ccxt streams trades for is either collected or left out with a reason.
  const { pro } = await import('ccxt');
  const streaming = Object.entries(pro as unknown as Record<string, unknown>)
    .filter(([, c]) => typeof c === 'function')
    .map(([, C]) => new (C as new () => { has: Record<string, unknown> })())
    .filter((ex) => ex.has.watchTrades || ex.has.watchTradesForSymbols).length;
  const accounted = new Set([...derived.venues.map((v) => v.ccxt), ...derived.left.map((l) => l.ccxt)]);
  expect(accounted.size).toBe(streaming);
  for (const l of derived.left) expect(l.reason.length, l.ccxt).toBeGreaterThan(10);
});

test("venue metadata comes from ccxt's descriptions", async () => {
  const { pro } = await import('ccxt');
  const describe = (id: string) => new (pro as unknown as Record<string, new () => { name: string; countries: string[]; urls: { www: string; logo: string } }>)[id]!();
  const bitget = describe('bitget');
  expect(findCcxtVenue('bitget')).toMatchObject({ ccxt: 'bitget', contract: 'spot', name: bitget.name, countries: bitget.countries, url: bitget.urls.www, logo: bitget.urls.logo });
  expect(findCcxtVenue('bitget-swap')).toMatchObject({ ccxt: 'bitget', contract: 'perpetual', name: `${bitget.name} Perpetuals` });
  const lighter = describe('lighter');
  expect(findCcxtVenue('lighter-swap')).toMatchObject({ name: `${lighter.name} Perpetuals`, channels: ['trades', 'books', 'liquidations'], liquidationSide: 'order' });
  // Perpetual-only exchanges keep their name; fiat-only venues follow their fiat.
  expect(findCcxtVenue('blofin-swap')?.name).toBe(describe('blofin').name);
  expect(findCcxtVenue('upbit')?.quotes).toEqual(['USDT', 'USDC', 'USD', 'KRW']);
});

test('at least 50 venues in all, none collected twice: a native venue replaces the ccxt one of the same exchange and kind', () => {
  const ids = [...nativeVenues.map((v) => v.id), ...ccxtVenues.map((v) => v.id)];
  expect(ids.length).toBeGreaterThanOrEqual(50);
  expect(new Set(ids).size).toBe(ids.length);
  const coveredByPolicy = new Set(Object.values(ccxtPolicies).flatMap((p) => Object.values(p.native ?? {})));
  // A native venue added without naming the ccxt exchange it replaces would be collected twice.
  for (const v of nativeVenues) expect(coveredByPolicy.has(v.id), `${v.id}: add it to ccxtPolicies' native entries`).toBe(true);
  for (const v of ccxtVenues) {
    const native = ccxtPolicies[v.ccxt]?.native?.[v.contract];
    expect(native === undefined || !nativeVenues.some((n) => n.id === native), v.id).toBe(true);
  }
  expect(ccxtVenues.map((v) => v.ccxt)).not.toContain('coinbaseexchange');
  expect(findCcxtVenue('binance')).toBeUndefined();
  expect(findCcxtVenue('okx-swap')).toBeUndefined();
});

test('the venue catalog the API serves lists the ccxt venues, with their kind; their tickers map through the explicit ccxt table', () => {
  for (const v of ccxtVenues) expect(findVenue(v.id), v.id).toMatchObject({ id: v.id, name: v.name, contract: v.contract, url: v.url });
  expect(catalogVenues.length).toBe(nativeVenues.length + ccxtVenues.length);
  expect(findVenue('woo-swap')?.contract).toBe('perpetual');
  expect(findVenue('woo')?.contract).toBe('spot');
  expect(assetIdForVenueTicker('bitget', 'BTC')).toBe('bitcoin');
  expect(assetIdForVenueTicker('lighter-swap', 'ETH')).toBe('ethereum');
  // Not in the table: never guessed.
  expect(assetIdForVenueTicker('bitget', 'RON')).toBeUndefined();
  expect(assetIdForVenueTicker('bitget', '1000PEPE')).toBeUndefined();
});

test('--venues names ccxt venues beside native ones (`ccxt` for all of them); the venue table lists every venue', () => {
  expect(selectVenues('bitget,binance,woo-swap').map((v) => v.id)).toEqual(['binance']);
  expect(selectCcxtVenues('bitget,binance,woo-swap').map((v) => v.id)).toEqual(['bitget', 'woo-swap']);
  expect(selectCcxtVenues(undefined)).toEqual([]);
  expect(selectCcxtVenues('ccxt')).toEqual(ccxtVenues);
  expect(selectVenues('ccxt')).toEqual([]);
  expect(() => selectVenues('bitget,nope')).toThrow(ConfigError);
  expect(venueTable().split('\n').find((l) => l.startsWith('lighter-swap '))).toMatch(/perpetual\s+trades,books,liquidations\s+ccxt \(lighter\)/);
  const rows = venueTable().trim().split('\n').slice(1);
  expect(rows.length).toBeGreaterThanOrEqual(50);
  expect(rows.filter((r) => /\snative\s/.test(r))).toHaveLength(nativeVenues.length);
  expect(rows.filter((r) => /\sccxt \(/.test(r))).toHaveLength(ccxtVenues.length);
});

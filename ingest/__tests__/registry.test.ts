import { existsSync, readdirSync } from 'node:fs';
import { expect, test } from 'vitest';
import { findVenue } from '../../infra/catalog/catalog.ts';
import { ConfigError } from '../../infra/config.ts';
import { venueEndpoints } from '../venue.ts';
import { ccxtVenues, findNativeVenue, nativeVenues, selectVenues, venueTable } from '../venues/registry.ts';

test('every native venue file (one with recorded fixtures beside it) is registered, catalogued and documented', async () => {
  const dirs = readdirSync(new URL('../venues/', import.meta.url), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(new URL(`../venues/${d.name}/__fixtures__/`, import.meta.url)))
    .map((d) => d.name);
  expect(dirs.length).toBeGreaterThanOrEqual(6);
  const registered = new Set(nativeVenues);
  for (const dir of dirs) {
    const exported = Object.values(await import(`../venues/${dir}.ts`)).filter((v) => typeof v === 'object' && v !== null && 'parse' in v && 'sockets' in v);
    expect(exported.length, dir).toBeGreaterThan(0);
    for (const venue of exported) expect(registered.has(venue as never), `${dir}.ts is not in registry.ts`).toBe(true);
  }
  for (const v of nativeVenues) {
    expect(findVenue(v.id), v.id).toMatchObject({ name: v.name, contract: v.contract });
    expect(v.docs).toMatch(/^https:\/\//);
    expect(v.channels).toContain('trades');
    if (v.channels.includes('liquidations')) expect(v.liquidations, v.id).toBeDefined();
  }
});

test('the venue catalog states each native venue\'s channels and sampled liquidations as its descriptor does', () => {
  // The API and the liquidation sink read these facts from the catalog: a descriptor that changes them alone would make them lie.
  for (const v of nativeVenues) {
    expect(findVenue(v.id)?.channels, `${v.id}: channels in infra/catalog/venues.json`).toEqual(v.channels);
    expect(findVenue(v.id)?.liquidationsSampled, `${v.id}: liquidationsSampled in infra/catalog/venues.json`).toBe(v.liquidations?.sampled === true);
  }
});

test('endpoints: the venue defaults, or VENUE_<ID>_WS_URL / _REST_URL checked as URLs', () => {
  const swap = findNativeVenue('okx-swap')!;
  expect(venueEndpoints(swap, {})).toEqual(swap.endpoints);
  expect(venueEndpoints(swap, { VENUE_OKX_SWAP_WS_URL: 'ws://127.0.0.1:9000/', VENUE_OKX_SWAP_REST_URL: 'http://127.0.0.1:9001' })).toEqual({
    ws: 'ws://127.0.0.1:9000',
    rest: 'http://127.0.0.1:9001',
  });
  expect(() => venueEndpoints(swap, { VENUE_OKX_SWAP_WS_URL: 'not a url' })).toThrow(ConfigError);
  expect(() => venueEndpoints(swap, { VENUE_OKX_SWAP_WS_URL: 'not a url' })).toThrow(/VENUE_OKX_SWAP_WS_URL="not a url": must be a URL/);
});

test('--venues picks venues by id (all by default); --list-venues shows each with its channels', () => {
  expect(selectVenues(undefined)).toEqual(nativeVenues);
  expect(selectVenues('binance, okx-swap').map((v) => v.id)).toEqual(['binance', 'okx-swap']);
  expect(() => selectVenues('binance,nope')).toThrow(/unknown venue "nope"; supported: binance, /);
  const table = venueTable().split('\n');
  expect(table).toHaveLength(nativeVenues.length + ccxtVenues.length + 1);
  expect(table.find((l) => l.startsWith('binance-futures '))).toMatch(/perpetual\s+trades,books,liquidations \(liquidations sampled\)\s+native/);
});

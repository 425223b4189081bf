import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadAssetUniverse } from '../catalog/assetUniverse.ts';
import { findAsset } from '../catalog/catalog.ts';
import type { Store } from '../store.ts';
import { openTestStore, trade } from '../../test/support/harness.ts';

// What the universe calls a discovered asset: the name its venue's listing gives it, carried by the
// collectors' statuses (market_connections.base_name), or else its ticker in capitals.

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(() => dispose());

const t0 = Date.UTC(2026, 10, 1);
const status = (asset: string, venue: string, market: string, ts: number, baseName: string) => ({
  asset, venue, market, quote: 'USDT', ts, received_at: ts, connected: true, base_name: baseName,
});

test("a discovered asset is named by its market's latest status that gave a name; one without a name keeps the ticker; a catalog asset keeps the catalog's name", async () => {
  const assets = [
    ['zorba--gate', 'gate', 'ZORBA_USDT'],
    ['quiet--gate', 'gate', 'QUIET_USDT'],
    ['plain--kraken', 'kraken', 'PLAINUSD'],
    ['bitcoin', 'gate', 'BTC_USDT'],
  ] as const;
  await store.insert(
    'trades',
    assets.map(([asset, venue, market], i) => trade({ venue, market, asset, quote: 'USDT', trade_id: `t${i}`, ts: t0 + i * 1_000, price: 1, quantity: 1 })),
  );
  await store.insert('market_connections', [
    status('zorba--gate', 'gate', 'ZORBA_USDT', t0, 'Zorba Old Name'),
    status('zorba--gate', 'gate', 'ZORBA_USDT', t0 + 60_000, 'Zorba Network'),
    // A later status without a name (a venue that stopped giving one) does not take the name away.
    status('zorba--gate', 'gate', 'ZORBA_USDT', t0 + 120_000, ''),
    status('quiet--gate', 'gate', 'QUIET_USDT', t0, ''),
    status('bitcoin', 'gate', 'BTC_USDT', t0, 'Bitcoin on Gate'),
  ]);

  const universe = await loadAssetUniverse(store);
  expect(universe.find('zorba--gate')?.name).toBe('Zorba Network');
  expect(universe.find('zorba--gate')?.description).toContain('named Zorba Network there');
  expect(universe.find('quiet--gate')?.name).toBe('QUIET');
  expect(universe.find('plain--kraken')?.name).toBe('PLAIN');
  expect(universe.find('bitcoin')?.name).toBe(findAsset('bitcoin')!.name);
  // The list serves the same objects.
  expect(universe.assets.filter((a) => a.id.includes('--')).map((a) => [a.id, a.name])).toEqual([
    ['zorba--gate', 'Zorba Network'],
    ['quiet--gate', 'QUIET'],
    ['plain--kraken', 'PLAIN'],
  ]);
});

test('a read builds again only the discovered assets whose listed facts changed; the others are the same objects as before', async () => {
  const first = await loadAssetUniverse(store);
  await store.insert('market_connections', [
    status('quiet--gate', 'gate', 'QUIET_USDT', t0 + 180_000, 'Quiet Protocol'),
    { ...status('plain--kraken', 'kraken', 'PLAINUSD', t0 + 180_000, ''), base_contracts: { ethereum: '0x00000000000000000000000000000000000000aa' } },
  ]);
  const second = await loadAssetUniverse(store);
  expect(second.find('zorba--gate')).toBe(first.find('zorba--gate'));
  expect(second.find('quiet--gate')).not.toBe(first.find('quiet--gate'));
  expect(second.find('quiet--gate')?.name).toBe('Quiet Protocol');
  expect(second.find('plain--kraken')?.platforms).toEqual({ ethereum: { contract_address: '0x00000000000000000000000000000000000000aa', decimal_place: null } });
  expect(first.find('plain--kraken')?.platforms).toEqual({});
});

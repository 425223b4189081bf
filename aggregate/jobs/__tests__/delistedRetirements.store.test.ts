// A discovered asset whose markets all left its venue's listing a day ago is retired: its history
// moves to an id of its own, and a later listing of the same ticker is a new asset under the old id
// (its own first print, its own prices), not the continuation of the old one.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadAssetUniverse } from '../../../infra/catalog/assetUniverse.ts';
import type { Store } from '../../../infra/store.ts';
import { openTestStore, silentLog, trade, type TradeRow } from '../../../test/support/harness.ts';
import { delistedAssets, retireDelistedAssets, retireAfterMs } from '../delistedRetirements.ts';

const hour = 3_600_000;
const now = Date.UTC(2026, 11, 4, 12);
const listedAt = now - 72 * hour;
/** FOO's two Gate markets left the listing at 23:30 on December 2nd: its retired id is of that day. */
const delistedAt = Date.UTC(2026, 11, 2, 23, 30);
const retired = 'foo--gate--20261202';

const status = (asset: string, market: string, ts: number, state: 'connected' | 'down' | 'delisted') => ({
  asset,
  venue: 'gate',
  market,
  quote: 'USDT',
  ts,
  received_at: ts,
  connected: state === 'connected',
  delisted: state === 'delisted',
});

const fooTrades: TradeRow[] = Array.from({ length: 6 }, (_, i) =>
  trade({ venue: 'gate', market: i % 2 ? 'FOO_USDC' : 'FOO_USDT', asset: 'foo--gate', quote: i % 2 ? 'USDC' : 'USDT', trade_id: `f${i}`, ts: listedAt + i * 60_000, price: 2 + i * 0.01, quantity: 10 }),
);
const other = (asset: string, market: string, id: string) => trade({ venue: 'gate', market, asset, quote: 'USDT', trade_id: id, ts: listedAt, price: 1, quantity: 1 });

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ store, dispose } = await openTestStore());
  await store.insert('trades', [...fooTrades, other('bar--gate', 'BAR_USDT', 'b1'), other('baz--gate', 'BAZ_USDT', 'z1'), other('qux--gate', 'QUX_USDT', 'q1'), other('zed--gate', 'ZED_USDT', 'd1')]);
  await store.insert('market_connections', [
    status('foo--gate', 'FOO_USDT', listedAt, 'connected'),
    status('foo--gate', 'FOO_USDC', listedAt, 'connected'),
    // One market went before the other: the asset is delisted when the last one is.
    status('foo--gate', 'FOO_USDC', delistedAt - hour, 'delisted'),
    status('foo--gate', 'FOO_USDT', delistedAt, 'delisted'),
    // BAR: one market left, the other is still listed (its socket dropped since: still listed).
    status('bar--gate', 'BAR_USDT', listedAt, 'connected'),
    status('bar--gate', 'BAR_USDC', listedAt, 'connected'),
    status('bar--gate', 'BAR_USDT', delistedAt, 'delisted'),
    status('bar--gate', 'BAR_USDC', delistedAt, 'down'),
    // BAZ left the listing less than a day ago.
    status('baz--gate', 'BAZ_USDT', listedAt, 'connected'),
    status('baz--gate', 'BAZ_USDT', now - retireAfterMs + hour, 'delisted'),
    // QUX left for an hour and came back: listed again.
    status('qux--gate', 'QUX_USDT', delistedAt - 2 * hour, 'delisted'),
    status('qux--gate', 'QUX_USDT', delistedAt - hour, 'connected'),
  ]);
  // ZED was joined by the operator's identities file; a trade a collector still sent under its id does not bring it back.
  await store.insert('asset_aliases', [{ alias: 'zed--gate', target: 'bitcoin', venue: 'gate', ticker: 'ZED', scale: 1, trades_moved: 0, liquidations_moved: 0, joined_at: now, reason: 'identities-file' }]);
});
afterAll(() => dispose());

const rowsOf = (table: string, asset: string) => store.rows<{ n: number }>('SELECT count() AS n FROM {table:Identifier} WHERE asset = {asset:String}', { table, asset }).then(([r]) => Number(r!.n));
const firstPrint = (asset: string) =>
  store.rows<{ first: number | string }>('SELECT toUnixTimestamp64Milli(min(first_ts)) AS first FROM asset_first_prints WHERE asset = {asset:String}', { asset }).then(([r]) => Number(r!.first));

describe('retireDelistedAssets', () => {
  test('only an asset all of whose markets left the listing a day ago or more is due', async () => {
    expect(await delistedAssets(store, now)).toEqual([{ asset: 'foo--gate', venue: 'gate', delistedAt, retired }]);
    // Half an hour before the day is up: not yet.
    expect(await delistedAssets(store, delistedAt + retireAfterMs - hour / 2)).toEqual([]);
  });

  test('its history moves to the retired id; the old id is an alias of it until the ticker trades again', async () => {
    expect(await retireDelistedAssets(store, silentLog, now)).toEqual([{ alias: 'foo--gate', target: retired, trades: 6, liquidations: 0 }]);
    for (const table of ['trades', 'candles_1m', 'asset_first_prints', 'market_connections']) expect(await rowsOf(table, 'foo--gate'), table).toBe(0);
    expect(await rowsOf('trades', retired)).toBe(6);
    expect(await firstPrint(retired)).toBe(listedAt);
    const [candles] = await store.rows<{ quote_volume: number }>('SELECT sum(quote_volume) AS quote_volume FROM candles_1m WHERE asset = {retired:String}', { retired });
    expect(candles!.quote_volume).toBeCloseTo(fooTrades.reduce((s, t) => s + t.price * t.quantity, 0), 9);
    const [alias] = await store.rows<{ target: string; reason: string }>("SELECT target, reason FROM asset_aliases FINAL WHERE alias = 'foo--gate'");
    expect(alias).toEqual({ target: retired, reason: 'delisted' });

    const universe = await loadAssetUniverse(store, now);
    const ids = universe.assets.map((a) => a.id);
    expect(ids).toContain(retired);
    expect(ids).not.toContain('foo--gate');
    expect(universe.find('foo--gate')?.id).toBe(retired);
    expect(universe.find(retired)?.symbol).toBe('foo');
    expect(universe.find(retired)?.description).toContain('left that listing on 2026-12-02');
    // The operator's join still hides its id, trades under it or not.
    expect(ids).not.toContain('zed--gate');
    expect(universe.find('zed--gate')?.id).toBe('bitcoin');

    // The retired id's statuses (copied) say delisted, but a retired id is not retired again.
    expect(await retireDelistedAssets(store, silentLog, now)).toEqual([]);
  });

  test('the venue lists the ticker again, for another asset: a new asset under the old id, with its own first print', async () => {
    const relistedAt = now + 2 * hour;
    await store.insert('market_connections', [status('foo--gate', 'FOO_USDT', relistedAt, 'connected')]);
    await store.insert('trades', [trade({ venue: 'gate', market: 'FOO_USDT', asset: 'foo--gate', quote: 'USDT', trade_id: 'n1', ts: relistedAt + 1_000, price: 0.0004, quantity: 1e6 })]);

    const universe = await loadAssetUniverse(store, relistedAt + 2_000);
    expect(universe.find('foo--gate')?.id).toBe('foo--gate');
    expect(universe.find(retired)?.id).toBe(retired);
    const discovered = universe.assets.map((a) => a.id).filter((id) => id.startsWith('foo--'));
    // In order of first print: the old FOO, then the new.
    expect(discovered).toEqual([retired, 'foo--gate']);
    expect(await firstPrint('foo--gate')).toBe(relistedAt + 1_000);
    expect(await rowsOf('trades', 'foo--gate')).toBe(1);
    // Listed again: not due, however long after.
    expect((await delistedAssets(store, relistedAt + 10 * retireAfterMs)).map((d) => d.asset)).toEqual(['baz--gate']);
  });
});

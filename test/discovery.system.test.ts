// Discovery from the simulator's universe (simulator/universe.ts) to the API: the collectors follow
// every listed market, tickers the catalog does not map become discovered assets, a brand-new
// listing is served once it prints, named as its venue's listing names it where it gives a name, and
// no served asset ever holds markets of two simulated assets (checked against the simulator's ground
// truth, not against our own ids).
import { mkdtempSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startStatusSink } from '../aggregate/statusSink.ts';
import { retireAfterMs, retireDelistedAssets } from '../aggregate/jobs/delistedRetirements.ts';
import { startTradeSink } from '../aggregate/tradeSink.ts';
import { indexSettingsFromConfig, startIndexRunner } from '../aggregate/indexRunner.ts';
import { measuredRule } from '../aggregate/indexPrices/latestIndexPrices.ts';
import { KeyStore } from '../api/keys.ts';
import { loadNewCoins } from '../api/routes/newCoins.ts';
import { startApi, type ApiServer } from '../api/server.ts';
import { startCollector } from '../ingest/collector.ts';
import type { Collector } from '../ingest/collectorKit.ts';
import { gate } from '../ingest/venues/gate.ts';
import { kraken } from '../ingest/venues/kraken.ts';
import { kucoin } from '../ingest/venues/kucoin.ts';
import { createMemoryBus } from '../infra/bus/memoryBus.ts';
import { loadAssetUniverse } from '../infra/catalog/assetUniverse.ts';
import { parseDiscoveredId, retiredAssetId } from '../infra/catalog/discovered.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/log.ts';
import { migrate } from '../infra/migrate.ts';
import { openStore, type Store } from '../infra/store.ts';
import { chainConfig } from '../aggregate/jobs/chains/chainsConfig.ts';
import { readTokenSupplies } from '../aggregate/jobs/chains/tokenSupplies.ts';
import { startDemoChain, syntheticTokens } from '../simulator/evmChain.ts';
import { simulatedContract } from '../simulator/market.ts';
import { simulatedUniverse, startSimulator, type Simulator } from '../simulator/simulator.ts';
import { get } from './support/harness.ts';
import { until, untilValue } from './support/until.ts';

const dir = mkdtempSync(join(tmpdir(), 'mds-discovery-'));
const seed = 20261128;
const universe = { assets: 120, tradesPerSecondScale: 20 };
const log = createLogger('silent');
const venues = [gate, kraken, kucoin];

let sim: Simulator;
let store: Store;
let api: ApiServer;
let key: string;
const collectors: Collector[] = [];
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // A small universe: 120 made-up assets over the three venues, a few listing while the test runs.
  sim = await startSimulator({ venues: ['gate', 'kraken', 'kucoin'], seed, tradesPerSecondPerMarket: 1, universe });
  const config = loadConfig({ MDS_DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', AGGREGATE_BATCH_MS: '100' });
  store = await openStore(config);
  await migrate(store);
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log, batchRows: 2_000, batchMs: 100 });
  stops.push(() => sink.stop());
  // The collectors' statuses carry what each venue's listing calls a market's base asset.
  const statuses = await startStatusSink({ bus, store, log, batchRows: 1_000, batchMs: 100 });
  stops.push(() => statuses.stop());
  for (const venue of venues) {
    // Re-listed every 2 s, so a listing made by the test is collected at once.
    const collector = await startCollector({ venue, endpoints: sim.endpoints(venue.id as 'gate' | 'kraken' | 'kucoin'), bus, log, discover: true, tuning: { marketsRefreshMs: 2_000 } });
    collectors.push(collector);
  }
  const index = startIndexRunner({ store, log, ...indexSettingsFromConfig(config) });
  stops.push(() => index.stop());
  key = (await new KeyStore(store).create('discovery-test')).key;
  api = await startApi({ store, config, log });
}, 120_000);

afterAll(async () => {
  await api?.close();
  for (const c of collectors) await c.stop();
  for (const stop of stops) await stop();
  await store?.close();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

const prices = async () => ((await get(`${api.url}/v1/prices`, { 'x-api-key': key })).json as { prices: { assetId: string }[] }).prices.map((p) => p.assetId);

describe('discovery on a simulated universe', () => {
  test('discovered assets are served, and none holds markets of two simulated assets', async () => {
    const served = await untilValue(async () => {
      const ids = (await prices()).filter((id) => parseDiscoveredId(id));
      return ids.length >= 20 ? ids : undefined;
    }, 'twenty discovered assets priced', 90_000);
    const markets = await store.rows<{ asset: string; venue: string; market: string }>(
      'SELECT DISTINCT asset, venue, market FROM trades WHERE asset IN {assets:Array(String)}',
      { assets: served },
    );
    const truths = new Map<string, Set<string>>();
    for (const m of markets) {
      const truth = sim.universe!.truth(m.venue, m.market);
      expect(truth, `${m.venue} ${m.market}`).toBeDefined();
      truths.set(m.asset, (truths.get(m.asset) ?? new Set()).add(`${truth!.assetKey} x${truth!.unit}`));
    }
    const merged = [...truths].filter(([, keys]) => keys.size > 1);
    expect(merged, 'served assets holding markets of two simulated assets').toEqual([]);
    // Each discovered id names the venue all of its markets are on.
    for (const m of markets) expect(parseDiscoveredId(m.asset)!.venue).toBe(m.venue);
  }, 120_000);

  test("a brand-new asset listed on one venue is priced and listed once it prints, under the name the venue's listing gives it, if any", async () => {
    // One on Kraken (its asset pairs give no name: the ticker in capitals), one on Gate (base_name).
    const onKraken = sim.universe!.listNow('kraken', { tradesPerSecond: 2, quote: 'USD' });
    const onGate = sim.universe!.listNow('gate', { tradesPerSecond: 2, quote: 'USDT' });
    const id = `${onKraken.asset.ticker.toLowerCase()}--kraken`;
    const gateId = `${onGate.asset.ticker.toLowerCase()}--gate`;
    expect(parseDiscoveredId(id)).toEqual({ ticker: onKraken.asset.ticker.toLowerCase(), venue: 'kraken' });
    // The simulator's own name for the Gate one: what its Gate listing serves.
    expect(onGate.asset.name).not.toBe(onGate.asset.ticker.toUpperCase());
    await until(async () => {
      const priced = await prices();
      return priced.includes(id) && priced.includes(gateId);
    }, `${id} and ${gateId} in /v1/prices`, 60_000);
    const coin = await get(`${api.url}/v1/coins/${id}/markets`, { 'x-api-key': key });
    expect(coin.status).toBe(200);
    expect((coin.json as { markets: { venueId: string; pair: string }[] }).markets.map((m) => [m.venueId, m.pair])).toEqual([['kraken', `${onKraken.asset.ticker}/USD`]]);
    // The listings (without the day-long warm-up of a venue's first collection) name both once the
    // Gate market's status is stored; the coin list (/v1/coins) too, once its cached answer (30 s,
    // served while it is built again) is rebuilt after that.
    // Names by id in id order: the listings come newest first, and which of the two printed first varies.
    const byId = (entries: [string, string][]) => JSON.stringify(entries.sort(([a], [b]) => (a < b ? -1 : 1)));
    const expected = byId([[id, onKraken.asset.ticker.toUpperCase()], [gateId, onGate.asset.name]]);
    let last = '';
    const listed = async () => {
      const coins = await loadNewCoins(store, { limit: 250, now: Date.now(), warmupMs: 0, measured: measuredRule({ INDEX_STALE_AFTER_MS: 60_000, STORE_MIN_FREE_MB: 0 }) });
      return (last = byId(coins.coins.filter((c) => c.id === id || c.id === gateId).map((c) => [c.id, c.name])));
    };
    await until(async () => (await listed()) === expected, `both listed, named ${expected}`, { timeoutMs: 30_000, everyMs: 200, context: () => `last: ${last}` });
    const served = async () => {
      const list = await get(`${api.url}/v1/coins?ids=${id},${gateId}`, { 'x-api-key': key });
      return (last = byId((list.json as { coins: { id: string; name: string }[] }).coins.map((c) => [c.id, c.name])));
    };
    await until(async () => (await served()) === expected, `both served, named ${expected}`, { timeoutMs: 75_000, everyMs: 500, context: () => `last: ${last}` });
  }, 200_000);

  test("a brand-new KuCoin listing is served with the contract its currency list gives (the simulator's ERC20 chain: platform ethereum)", async () => {
    const onKucoin = sim.universe!.listNow('kucoin', { tradesPerSecond: 2, quote: 'USDT' });
    const id = `${onKucoin.asset.ticker.toLowerCase()}--kucoin`;
    const contract = simulatedContract(onKucoin.asset.key);
    // What /v1/coins/{id} serves as platforms (its page also needs the day's FX rates, which this store has not).
    let last = '';
    await until(
      async () => {
        last = JSON.stringify((await loadAssetUniverse(store)).find(id)?.platforms);
        return last === JSON.stringify({ ethereum: { contract_address: contract, decimal_place: null } });
      },
      `${id} served with its contract ${contract}`,
      { timeoutMs: 60_000, everyMs: 500, context: () => `last: ${last}` },
    );
  }, 90_000);
  test("the demo's chain holds the token of each made-up asset at the contract KuCoin publishes: its total supply is read from it and served", async () => {
    // The chain as the demo starts it: the tokens of the universe of the simulator's seed and options.
    const planned = simulatedUniverse(seed, universe);
    const chain = await startDemoChain({ blockMs: 60_000, tokens: syntheticTokens(planned.assets) });
    try {
      // Contracts of the planned assets KuCoin lists from the start (not those the tests above listed now).
      const onKucoin = new Set(planned.markets.filter((m) => m.venue === 'kucoin' && m.listAt === 0 && m.kind === 'plain').map((m) => simulatedContract(m.assetKey)));
      expect(onKucoin.size).toBeGreaterThan(0);
      // Some of them discovered with their contract (those that printed so far).
      const discovered = await untilValue(async () => {
        const found = (await loadAssetUniverse(store)).assets.filter((a) => onKucoin.has(a.platforms.ethereum?.contract_address ?? ''));
        return found.length >= 3 ? found : undefined;
      }, 'three KuCoin assets of the universe discovered with their contracts', 60_000);
      await readTokenSupplies({ store, log }, [chainConfig.parse(chain.config)]);
      const read = await loadAssetUniverse(store);
      for (const before of discovered) {
        const token = chain.model.token(before.platforms.ethereum!.contract_address);
        // The running simulator's asset behind the contract is the planned one the chain holds.
        expect([before.symbol, before.name]).toEqual([token?.symbol.toLowerCase(), token?.name]);
        const asset = read.find(before.id)!;
        expect([asset.supply.total, asset.supply.source, asset.platforms.ethereum?.decimal_place]).toEqual([Number(token!.totalSupply! / 10n ** 18n), 'chain:ethereum', 18]);
      }
    } finally {
      await chain.close();
    }
  }, 90_000);

  test('a ticker the venue delists and later gives another asset: the old asset is retired with its history, the new one starts under the id', async () => {
    const old = sim.universe!.listNow('gate', { tradesPerSecond: 4, quote: 'USDT' });
    const id = `${old.asset.ticker.toLowerCase()}--gate`;
    const tradesOf = async (asset: string) =>
      (await store.rows<{ n: number; first: number | string; price: number }>('SELECT count() AS n, toUnixTimestamp64Milli(min(ts)) AS first, avg(price) AS price FROM trades WHERE asset = {asset:String}', { asset }))[0]!;
    await until(async () => Number((await tradesOf(id)).n) >= 5, `${id} trades stored`, 60_000);
    // The collector's re-listing (every 2 s) finds it gone and says so; the status sink stores it.
    sim.universe!.delistNow('gate', old.symbol);
    await until(
      async () => Number((await store.rows<{ n: number }>('SELECT count() AS n FROM market_connections WHERE asset = {id:String} AND delisted', { id }))[0]!.n) === 1,
      `${id} stored as delisted`,
      30_000,
    );
    await sleep(500);
    const before = await tradesOf(id);
    // A day later (the retirement waits a day after the delisting: its clock moved, not the test's).
    const delistedAt = Date.now();
    const [outcome] = await retireDelistedAssets(store, log, delistedAt + retireAfterMs);
    const retired = outcome!.target;
    // Named after the day of the delisting (stored a moment before delistedAt: the day before, at midnight).
    expect([retiredAssetId(id, delistedAt), retiredAssetId(id, delistedAt - 30_000)]).toContain(retired);
    expect(outcome).toEqual({ alias: id, target: retired, trades: Number(before.n), liquidations: 0 });

    // Gate lists the ticker again, for another asset (the simulator's truth: another key, another price).
    const relistedAt = Date.now();
    const next = sim.universe!.listNow('gate', { tradesPerSecond: 4, quote: 'USDT', ticker: old.asset.ticker });
    expect(next.symbol).toBe(old.symbol);
    expect(next.asset.key).not.toBe(old.asset.key);
    await until(async () => Number((await tradesOf(id)).n) >= 5, `${id} trades of the new listing stored`, 60_000);
    const now = await tradesOf(id);
    expect(Number(now.first)).toBeGreaterThanOrEqual(relistedAt);
    expect(sim.universe!.truth('gate', next.symbol)!.assetKey).toBe(next.asset.key);
    // The old history is the retired id's, whole: nothing of the new listing joined it.
    expect(await tradesOf(retired)).toEqual(before);
    const read = await loadAssetUniverse(store);
    expect(read.find(id)?.id).toBe(id);
    expect(read.find(retired)?.id).toBe(retired);
    // Both listed as new coins, each with its own first print.
    const coins = await loadNewCoins(store, { limit: 250, now: Date.now(), warmupMs: 0, measured: measuredRule({ INDEX_STALE_AFTER_MS: 60_000, STORE_MIN_FREE_MB: 0 }) });
    const firstPrints = Object.fromEntries(coins.coins.filter((c) => c.id === id || c.id === retired).map((c) => [c.id, c.listedAt]));
    expect(Object.keys(firstPrints).sort()).toEqual([id, retired].sort());
    expect(firstPrints[retired]).toBeLessThan(relistedAt);
    expect(firstPrints[id]).toBeGreaterThanOrEqual(relistedAt);
  }, 150_000);
});

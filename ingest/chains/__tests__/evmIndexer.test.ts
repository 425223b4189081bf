import { afterAll, beforeAll, expect, test } from 'vitest';
import { computeIndex, openTestStore, silentLog } from '../../../api/__tests__/harness.ts';
import { defaultSimFactories, EvmChainModel, startEvmChainServer, type EvmChainServer, type SimSwap } from '../../simulator/evmChain.ts';
import { ChainReorgedWhileReadingError, EvmIndexer } from '../evmIndexer.ts';
import { buildChain, expectedUsd as usdOf, growChain as grow, hour, indexTrades, simChainConfig as config, simx, valuedTokens as valued, wbtc, weth } from './simChainFixture.ts';

// End to end: a simulated chain served over JSON-RPC, indexed into chDB, and every stored row
// compared with what the simulator emitted on its canonical chain, USD values recomputed here
// from the raw trades behind the index prices.

const nowS = Math.floor(Date.now() / 1000);
const genesisTs = nowS - 2 * 24 * hour;
const blockTimeS = 120;

// Bitcoin's index has a 3-hour hole, so swaps in its second and third hour value their other leg (or none).
const btcHole = { from: genesisTs + 20 * hour, to: genesisTs + 23 * hour };
const trades = indexTrades(genesisTs - hour, nowS, btcHole);
const expectedUsd = (s: SimSwap) => usdOf(s, trades);
const growChain = (model: EvmChainModel, blocks: number, seed: number) => grow(model, blocks, seed, blockTimeS);

interface StoredSwap {
  block: number;
  log_index: number;
  tx: string;
  pool: string;
  dex: string;
  ts: number;
  amount0_in: string;
  amount1_in: string;
  amount0_out: string;
  amount1_out: string;
  usd: number | null;
}

let env: Awaited<ReturnType<typeof openTestStore>>;
const servers: EvmChainServer[] = [];

beforeAll(async () => {
  env = await openTestStore();
  await env.store.insert('trades', trades);
  // Up to the last trade (at nowS).
  await computeIndex(env.store, (nowS + 5) * 1000, 3 * 24 * hour * 1000);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await env.dispose();
});

async function serve(model: EvmChainModel, maxLogsPerQuery?: number): Promise<EvmChainServer> {
  const server = await startEvmChainServer({ model, maxLogsPerQuery });
  servers.push(server);
  return server;
}

/** Rows as stored, without FINAL: a duplicate would show. */
async function storedSwaps(chain: string): Promise<StoredSwap[]> {
  return env.store.rows<StoredSwap>(
    `SELECT block, log_index, tx, pool, dex, toUnixTimestamp(ts) AS ts, toString(amount0_in) AS amount0_in, toString(amount1_in) AS amount1_in,
            toString(amount0_out) AS amount0_out, toString(amount1_out) AS amount1_out, usd
     FROM chain_swaps WHERE chain = {chain:String} ORDER BY block, log_index`,
    { chain },
  );
}

/** Compares stored rows with the simulator's canonical swaps in [fromBlock, toBlock], values recomputed. */
async function expectStoredToMatch(chain: string, model: EvmChainModel, fromBlock: number, toBlock: number): Promise<void> {
  const want = model.swaps().filter((s) => s.block >= fromBlock && s.block <= toBlock);
  const got = await storedSwaps(chain);
  expect(got.length).toBe(want.length);
  for (const [i, s] of want.entries()) {
    const row = got[i]!;
    expect({ ...row, usd: undefined }).toEqual({
      block: s.block,
      log_index: s.logIndex,
      tx: s.tx,
      pool: s.pool,
      dex: s.dex,
      ts: s.ts,
      amount0_in: String(s.amount0In),
      amount1_in: String(s.amount1In),
      amount0_out: String(s.amount0Out),
      amount1_out: String(s.amount1Out),
      usd: undefined,
    });
    const usd = expectedUsd(s);
    if (usd === null) expect(row.usd, `${s.tx}`).toBeNull();
    else expect(Math.abs(row.usd! / usd - 1), `${s.tx}`).toBeLessThan(1e-9);
  }
}

const model = buildChain({ seed: 11, genesisTs, blocks: 1_440, blockTimeS });

test('indexes a simulated chain up to head - confirmations: every swap, pool and USD value as emitted', async () => {
  const server = await serve(model);
  const indexer = new EvmIndexer({ chain: config('sim-a', server.url), store: env.store, log: silentLog });
  const result = await indexer.catchUp();
  const safeHead = model.head - 3;
  expect(result).toMatchObject({ head: model.head, safeHead, indexedTo: safeHead, duplicates: 0, malformed: 0, limitErrors: 0 });
  await expectStoredToMatch('sim-a', model, 0, safeHead);

  const want = model.swaps().filter((s) => s.block <= safeHead);
  expect(result.swaps).toBe(want.length);
  expect(result.unvalued).toBe(want.filter((s) => expectedUsd(s) === null).length);
  // The hole in bitcoin's index leaves some swaps valued on their other leg and some not at all.
  expect(result.unvalued).toBeGreaterThan(0);
  expect(want.filter((s) => s.ts >= btcHole.from + hour && s.ts < btcHole.to && s.token0 === wbtc.address && valued.has(s.token1)).length).toBeGreaterThan(0);

  const pools = await env.store.rows<{ pool: string; token0: string; token1: string; dex: string; fee: number | null }>(
    'SELECT pool, token0, token1, dex, fee FROM chain_pools WHERE chain = {chain:String} ORDER BY pool',
    { chain: 'sim-a' },
  );
  expect(pools).toEqual(
    model
      .minedPools()
      .map((p) => ({ pool: p.pool, token0: p.token0, token1: p.token1, dex: p.dex, fee: p.fee }))
      .sort((a, b) => (a.pool < b.pool ? -1 : 1)),
  );
  const [registry] = await env.store.rows<{ name: string }>('SELECT name FROM chain_registry FINAL WHERE chain = {chain:String}', { chain: 'sim-a' });
  expect(registry?.name).toBe('Test chain sim-a');
});

test('a reorg deeper than the confirmations: rows of orphaned blocks are deleted, the new fork indexed', async () => {
  const server = servers[0]!;
  const indexer = new EvmIndexer({ chain: config('sim-a', server.url), store: env.store, log: silentLog });
  // A pool created and traded in blocks that the reorg orphans.
  const doomedPool = model.createPool(defaultSimFactories[0]!, weth.address, simx.address);
  model.mine();
  model.swap(doomedPool, { amount0In: 10n ** 18n, amount1In: 0n, amount0Out: 0n, amount1Out: 5n * 10n ** 18n });
  growChain(model, 6, 5);
  const before = await indexer.catchUp();
  const orphanedFrom = model.head - 9;
  const orphanedTxs = new Set(model.swaps().filter((s) => s.block > orphanedFrom && s.block <= before.indexedTo!).map((s) => s.tx));
  expect(orphanedTxs.size).toBeGreaterThan(0);
  expect((await storedSwaps('sim-a')).some((s) => s.pool === doomedPool.pool)).toBe(true);

  model.reorg(9);
  growChain(model, 12, 9);
  const after = await indexer.catchUp();
  // The fork point found is the newest STORED block that survived: at or below the last block that stayed.
  expect(after.reorgedAbove).toBeLessThanOrEqual(orphanedFrom);
  expect(after.reorgedAbove).toBeGreaterThan(orphanedFrom - 20);
  const stored = await storedSwaps('sim-a');
  expect(stored.filter((s) => orphanedTxs.has(s.tx))).toEqual([]);
  expect(stored.some((s) => s.pool === doomedPool.pool)).toBe(false);
  const pools = await env.store.rows<{ pool: string }>('SELECT pool FROM chain_pools WHERE chain = {chain:String}', { chain: 'sim-a' });
  expect(pools.map((p) => p.pool)).not.toContain(doomedPool.pool);
  await expectStoredToMatch('sim-a', model, 0, model.head - 3);
  const [tip] = await env.store.rows<{ hash: string }>('SELECT hash FROM chain_blocks WHERE chain = {chain:String} ORDER BY number DESC LIMIT 1', { chain: 'sim-a' });
  expect(tip?.hash).toBe(model.block(model.head - 3)!.hash);
});

test('resume after a restart, and after a crash that lost the progress of written rows: nothing twice', async () => {
  const server = servers[0]!;
  growChain(model, 30, 13);
  // A fresh indexer (a restart) resumes from the stored cursor.
  const restarted = await new EvmIndexer({ chain: config('sim-a', server.url), store: env.store, log: silentLog }).catchUp();
  expect(restarted.duplicates).toBe(0);
  expect(restarted.swaps).toBe(model.swaps().filter((s) => s.block > model.head - 33 && s.block <= model.head - 3).length);
  await expectStoredToMatch('sim-a', model, 0, model.head - 3);

  // As if the process died after writing swaps but before their blocks (the cursor) were stored.
  const lostFrom = model.head - 200;
  await env.store.client.command({ query: 'DELETE FROM chain_blocks WHERE chain = {chain:String} AND number > {n:UInt64}', query_params: { chain: 'sim-a', n: lostFrom } });
  const [cursor] = await env.store.rows<{ n: number }>('SELECT max(number) AS n FROM chain_blocks WHERE chain = {chain:String}', { chain: 'sim-a' });
  const replayed = await new EvmIndexer({ chain: config('sim-a', server.url), store: env.store, log: silentLog }).catchUp();
  const replayedSwaps = model.swaps().filter((s) => s.block > cursor!.n && s.block <= model.head - 3).length;
  expect(replayedSwaps).toBeGreaterThan(0);
  expect(replayed).toMatchObject({ swaps: 0, pools: 0, duplicates: replayedSwaps, indexedTo: model.head - 3 });
  await expectStoredToMatch('sim-a', model, 0, model.head - 3);
});

test('a reorg between reading the logs and their headers: nothing is written, the next run indexes the new fork', async () => {
  let reorgAfterLogs = true;
  const server = await startEvmChainServer({
    model,
    afterCall(method) {
      if (method !== 'eth_getLogs' || !reorgAfterLogs) return;
      reorgAfterLogs = false;
      // Orphans blocks whose swap logs were just sent.
      model.reorg(8);
      growChain(model, 8, 17);
    },
  });
  servers.push(server);
  const chain = config('sim-a', server.url);
  growChain(model, 10, 15);
  const before = await storedSwaps('sim-a');
  await expect(new EvmIndexer({ chain, store: env.store, log: silentLog }).catchUp()).rejects.toThrow(ChainReorgedWhileReadingError);
  expect(await storedSwaps('sim-a')).toEqual(before);
  await new EvmIndexer({ chain, store: env.store, log: silentLog }).catchUp();
  await expectStoredToMatch('sim-a', model, 0, model.head - 3);
});

test('a node that refuses large eth_getLogs answers: the range is halved until it passes', async () => {
  const server = await serve(model, 100);
  const result = await new EvmIndexer({ chain: config('sim-limited', server.url, { maxBlockRange: 5_000 }), store: env.store, log: silentLog }).catchUp();
  expect(server.limitErrors).toBeGreaterThan(0);
  expect(result.limitErrors).toBe(server.limitErrors);
  expect(result.indexedTo).toBe(model.head - 3);
  await expectStoredToMatch('sim-limited', model, 0, model.head - 3);
});

test('history from backfillDays, with pools of older blocks found by the factory backfill', async () => {
  const server = await serve(model);
  const chain = config('sim-recent', server.url, {
    startBlock: undefined,
    backfillDays: 1,
    factories: defaultSimFactories.map((f) => ({ address: f.address, kind: f.kind, dex: f.dex, fromBlock: 0 })),
  });
  const result = await new EvmIndexer({ chain, store: env.store, log: silentLog }).catchUp();
  const headTs = model.block(model.head)!.timestamp;
  let start = 0;
  while (model.block(start)!.timestamp < headTs - 24 * hour) start += 1;
  expect(result.backfilledPools).toBe(model.minedPools().filter((p) => p.createdBlock < start).length);
  expect(result.backfilledPools).toBeGreaterThan(0);
  await expectStoredToMatch('sim-recent', model, start, model.head - 3);
  // The indexed history starts right after the block before the first one indexed.
  const [first] = await env.store.rows<{ number: number }>('SELECT min(number) AS number FROM chain_blocks WHERE chain = {chain:String}', { chain: 'sim-recent' });
  expect(first?.number).toBe(start - 1);
});

import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { computeIndex, openTestStore, silentLog } from '../../../../test/support/harness.ts';
import { until } from '../../../../test/support/until.ts';
import type { Logger } from '../../../../infra/log.ts';
import { defaultSimFactories, demoChainRetainBlocks, EvmChainModel, startDemoChain, startEvmChainServer, type DemoChain, type EvmChainServer, type SimSwap } from '../../../../simulator/evmChain.ts';
import { chainConfig } from '../chainsConfig.ts';
import { ChainMismatchError, ChainReorgedWhileReadingError, EvmIndexer } from '../evmIndexer.ts';
import { JsonRpcClient, JsonRpcError } from '../jsonRpc.ts';
import { buildChain, expectedUsd as usdOf, growChain as grow, hour, indexTrades, simChainConfig as config, simTokens, simx, valuedTokens as valued, wbtc, weth } from './simChainFixture.ts';

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

/** Swap identities stored for a chain, in chain order. */
async function storedSwapKeys(chain: string): Promise<string[]> {
  return (await storedSwaps(chain)).map((s) => `${s.block}:${s.log_index}:${s.tx}`);
}

const swapKeys = (swaps: readonly SimSwap[]) => swaps.map((s) => `${s.block}:${s.logIndex}:${s.tx}`);

function capturingLog(): { log: Logger; lines: { level: number; msg: string; reason?: string }[] } {
  const lines: { level: number; msg: string; reason?: string }[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { log, lines };
}

test('the same chain id served by another chain (another genesis): stop keeps the history and fails, reindex replaces it', async () => {
  const first = buildChain({ seed: 31, genesisTs, blocks: 300, blockTimeS });
  const firstServer = await serve(first);
  await new EvmIndexer({ chain: config('sim-reset', firstServer.url), store: env.store, log: silentLog }).catchUp();
  await expectStoredToMatch('sim-reset', first, 0, first.head - 3);

  // A restarted devnet: a new genesis, a shorter chain, a new endpoint, the same chain id.
  const second = buildChain({ seed: 32, genesisTs: genesisTs + 600, blocks: 120, blockTimeS });
  expect(second.block(0)!.hash).not.toBe(first.block(0)!.hash);
  const secondServer = await serve(second);

  const stopping = new EvmIndexer({ chain: config('sim-reset', secondServer.url), store: env.store, log: silentLog });
  await expect(stopping.catchUp()).rejects.toThrow(ChainMismatchError);
  await expect(stopping.catchUp()).rejects.toThrow(/genesis/);
  await expectStoredToMatch('sim-reset', first, 0, first.head - 3);

  const { log, lines } = capturingLog();
  const reindexing = new EvmIndexer({ chain: config('sim-reset', secondServer.url, { onChainReset: 'reindex' }), store: env.store, log });
  const result = await reindexing.catchUp();
  expect(result.reset).toMatch(/genesis/);
  expect(lines.filter((l) => l.level >= 50).map((l) => l.reason)).toEqual([result.reset]);
  await expectStoredToMatch('sim-reset', second, 0, second.head - 3);
  const pools = await env.store.rows<{ pool: string }>('SELECT pool FROM chain_pools WHERE chain = {chain:String} ORDER BY pool', { chain: 'sim-reset' });
  expect(pools.map((p) => p.pool)).toEqual(second.minedPools().map((p) => p.pool).sort());
  const [tip] = await env.store.rows<{ n: number }>('SELECT max(number) AS n FROM chain_blocks WHERE chain = {chain:String}', { chain: 'sim-reset' });
  expect(tip?.n).toBe(second.head - 3);

  // From then on the new chain is the stored one: the next runs just go on.
  growChain(second, 20, 33);
  expect(await reindexing.catchUp()).toMatchObject({ reset: undefined, indexedTo: second.head - 3 });
  await expectStoredToMatch('sim-reset', second, 0, second.head - 3);
});

test('a stored history that shares no block with the node (no genesis recorded yet): stop fails, reindex replaces it', async () => {
  const first = buildChain({ seed: 34, genesisTs, blocks: 150, blockTimeS });
  await new EvmIndexer({ chain: config('sim-orphaned', (await serve(first)).url), store: env.store, log: silentLog }).catchUp();
  // As a store written before genesis hashes were recorded.
  await env.store.client.command({ query: 'DELETE FROM chain_registry WHERE chain = {chain:String}', query_params: { chain: 'sim-orphaned' } });
  const second = buildChain({ seed: 35, genesisTs: genesisTs + 600, blocks: 100, blockTimeS });
  const url = (await serve(second)).url;
  await expect(new EvmIndexer({ chain: config('sim-orphaned', url), store: env.store, log: silentLog }).catchUp()).rejects.toThrow(/no stored block/);
  const result = await new EvmIndexer({ chain: config('sim-orphaned', url, { onChainReset: 'reindex' }), store: env.store, log: silentLog }).catchUp();
  expect(result.reset).toMatch(/no stored block/);
  await expectStoredToMatch('sim-orphaned', second, 0, second.head - 3);
});

test('the demo chain after a demo restart: a new chain each start, still indexed after the restart', async () => {
  const chains: DemoChain[] = [];
  /** The newest block the indexer reads: `confirmations` below the head. */
  const confirmed = (chain: DemoChain) => chain.model.head - chainConfig.parse(chain.config).confirmations;
  /** Until the demo chain has mined a swap in a block the indexer reads. */
  const confirmedSwap = (chain: DemoChain) => until(() => chain.model.swaps().some((s) => s.block <= confirmed(chain)), 'a confirmed swap on the demo chain');
  const start = async () => {
    const chain = await startDemoChain({ blockMs: 20 });
    chains.push(chain);
    return { chain, indexer: new EvmIndexer({ chain: chainConfig.parse(chain.config), store: env.store, log: silentLog }) };
  };
  try {
    // Two demo chains started in the same instant are still two chains.
    const twins = await Promise.all([start(), start()]);
    expect(twins[0].chain.model.block(0)!.hash).not.toBe(twins[1].chain.model.block(0)!.hash);
    // The demo's chain keeps 30 minutes of blocks, not the model's 2.8 hours: its memory is level from then on.
    expect(twins[0].chain.model.retainBlocks).toBe(demoChainRetainBlocks);
    await Promise.all(twins.map((t) => t.chain.close()));

    const before = await start();
    await confirmedSwap(before.chain);
    const indexed = await before.indexer.catchUp();
    expect(indexed.swaps).toBeGreaterThan(0);
    expect(await storedSwapKeys('simchain')).toEqual(swapKeys(before.chain.model.swaps().filter((s) => s.block <= indexed.indexedTo!)));
    await before.chain.close();

    // The restarted demo: the same chain id, another chain; the indexer replaces the old history and goes on.
    const after = await start();
    expect(after.chain.model.block(0)!.hash).not.toBe(before.chain.model.block(0)!.hash);
    await confirmedSwap(after.chain);
    const first = await after.indexer.catchUp();
    expect(first.reset).toMatch(/genesis/);
    expect(await storedSwapKeys('simchain')).toEqual(swapKeys(after.chain.model.swaps().filter((s) => s.block <= first.indexedTo!)));
    await until(() => confirmed(after.chain) > first.indexedTo!, 'a block confirmed after the first catch-up');
    const next = await after.indexer.catchUp();
    expect(next).toMatchObject({ reset: undefined });
    expect(next.indexedTo).toBeGreaterThan(first.indexedTo!);
    expect(await storedSwapKeys('simchain')).toEqual(swapKeys(after.chain.model.swaps().filter((s) => s.block <= next.indexedTo!)));
  } finally {
    await Promise.all(chains.map((c) => c.close()));
  }
});

test('a chain keeps only its last retainBlocks blocks; pruned ones answer 4444 as geth does; an indexer that keeps up misses nothing', async () => {
  const retain = 100;
  const pruned = new EvmChainModel({ seed: 36, genesisTs, blockTimeS, tokens: simTokens, retainBlocks: retain });
  for (const f of defaultSimFactories) pruned.createPool(f, weth.address, simx.address);
  pruned.mine();
  const server = await serve(pruned);
  const indexer = new EvmIndexer({ chain: config('sim-pruned', server.url), store: env.store, log: silentLog });
  // Every swap emitted, collected while the blocks are still kept (each step is shorter than the retention).
  const emitted = new Map<string, SimSwap>();
  for (let step = 0; step < 12; step++) {
    growChain(pruned, 40, 37 + step);
    for (const s of pruned.swaps()) emitted.set(`${s.block}:${s.logIndex}`, s);
    await indexer.catchUp();
  }
  expect(pruned.head).toBe(1 + 12 * 40);
  expect(pruned.oldestKept).toBe(pruned.head - retain + 1);
  expect(pruned.swaps().length).toBeLessThan(emitted.size / 2);
  const all = [...emitted.values()].sort((a, b) => a.block - b.block || a.logIndex - b.logIndex);
  expect(await storedSwapKeys('sim-pruned')).toEqual(swapKeys(all.filter((s) => s.block <= pruned.head - 3)));

  const rpc = new JsonRpcClient(server.url);
  const pruneError = { name: 'JsonRpcError', code: 4444, message: expect.stringMatching(/pruned history unavailable/) };
  await expect(rpc.logs({ fromBlock: pruned.oldestKept - 1, toBlock: pruned.head })).rejects.toMatchObject(pruneError);
  await expect(rpc.blocks([pruned.oldestKept - 1])).rejects.toMatchObject(pruneError);
  expect((await rpc.logs({ fromBlock: pruned.oldestKept, toBlock: pruned.head })).length).toBeGreaterThan(0);
  expect((await rpc.blocks([0]))[0]?.hash).toBe(pruned.block(0)!.hash);
  // An indexer further behind than the node keeps fails loudly instead of skipping blocks.
  await expect(new EvmIndexer({ chain: config('sim-pruned-late', server.url), store: env.store, log: silentLog }).catchUp()).rejects.toBeInstanceOf(JsonRpcError);
});

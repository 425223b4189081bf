import { afterAll, expect, test } from 'vitest';
import { EvmIndexer } from '../../aggregate/jobs/chains/evmIndexer.ts';
import { buildChain, expectedUsd, hour, indexTrades, simChainConfig } from '../../aggregate/jobs/chains/__tests__/simChainFixture.ts';
import { startEvmChainServer, type EvmChainModel, type EvmChainServer } from '../../simulator/evmChain.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, silentLog } from '../../test/support/harness.ts';

// /v1/chains over two simulated chains indexed end to end; every figure recomputed here from
// the simulator's own record of what it emitted and from the raw trades behind the index.

const day = 24 * hour;
const nowS = Math.floor(Date.now() / 1000);
const trades = indexTrades(nowS - 10 * day, nowS);
// Window edges move with the time of the request: no swap within 15 minutes of one.
const edges = [1, 2, 7, 8].map((d) => nowS - d * day);
const quiet = (ts: number) => edges.some((e) => Math.abs(ts - e) < 15 * 60);

// A: 9 days of history (both changes defined). B: 30 hours (neither change: no full earlier window).
const chainA = buildChain({ seed: 21, genesisTs: nowS - 9 * day, blocks: 9 * 144, blockTimeS: 600, quiet });
const chainB = buildChain({ seed: 22, genesisTs: nowS - 30 * hour, blocks: 30 * 12, blockTimeS: 300, quiet });

const servers: EvmChainServer[] = [];

const api = useTestApi({
  keyName: 'chains-test',
  seed: async (store) => {
    await store.insert('trades', trades);
    // Up to the last trade (at nowS).
    await computeIndex(store, (nowS + 5) * 1000, 11 * day * 1000);
    for (const [id, model] of [['sim-a', chainA], ['sim-b', chainB]] as const) {
      const server = await startEvmChainServer({ model });
      servers.push(server);
      await new EvmIndexer({ chain: simChainConfig(id, server.url, { confirmations: 0, maxBlockRange: 2_000 }), store, log: silentLog }).catchUp();
    }
  },
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

function expectedRow(model: EvmChainModel, historyCovers: { prev: boolean; week: boolean }) {
  const swaps = model.swaps();
  const between = (from: number, to: number) => swaps.filter((s) => s.ts >= from && s.ts < to);
  const volume = (list: typeof swaps) => list.reduce((sum, s) => sum + (expectedUsd(s, trades) ?? 0), 0);
  const recent = between(nowS - day, nowS + 1);
  const v24 = volume(recent);
  const prev = volume(between(nowS - 2 * day, nowS - day));
  const weekAgo = volume(between(nowS - 8 * day, nowS - 7 * day));
  const pools = model.minedPools();
  return {
    volume24h: v24,
    swaps24h: recent.length,
    pools24h: new Set(recent.map((s) => s.pool)).size,
    dexes24h: new Set(recent.map((s) => s.dex)).size,
    poolsIndexed: pools.length,
    tokensIndexed: new Set(pools.flatMap((p) => [p.token0, p.token1])).size,
    volumeChange24h: historyCovers.prev ? (v24 / prev - 1) * 100 : null,
    volumeChange7d: historyCovers.week ? (v24 / weekAgo - 1) * 100 : null,
  };
}

const close = (got: number, want: number) => Math.abs(got - want) <= 1e-9 * Math.max(1, Math.abs(want));

test('GET /v1/chains: per chain 24 h volume, swaps, active pools and DEXes, registry sizes and volume changes', async () => {
  const res = await api.get('/v1/chains');
  expect(res.status).toBe(200);
  const body = res.json as { chains: Record<string, unknown>[] };
  expect(Object.keys(body)).toEqual(['chains']);
  const byId = new Map(body.chains.map((c) => [c.id as string, c]));
  expect([...byId.keys()].sort()).toEqual(['sim-a', 'sim-b']);
  // Largest 24 h volume first.
  expect((body.chains[0]!.volume24h as number) >= (body.chains[1]!.volume24h as number)).toBe(true);

  for (const [id, model, covers] of [
    ['sim-a', chainA, { prev: true, week: true }],
    ['sim-b', chainB, { prev: false, week: false }],
  ] as const) {
    const row = byId.get(id)!;
    const want = expectedRow(model, covers);
    expect(Object.keys(row).sort()).toEqual(
      ['id', 'name', 'volume24h', 'swaps24h', 'pools24h', 'dexes24h', 'poolsIndexed', 'tokensIndexed', 'volumeChange24h', 'volumeChange7d'].sort(),
    );
    expect(row.name).toBe(`Test chain ${id}`);
    expect(row).toMatchObject({ swaps24h: want.swaps24h, pools24h: want.pools24h, dexes24h: want.dexes24h, poolsIndexed: want.poolsIndexed, tokensIndexed: want.tokensIndexed });
    expect(want.swaps24h).toBeGreaterThan(50);
    expect(close(row.volume24h as number, want.volume24h), `${id} volume24h ${row.volume24h} vs ${want.volume24h}`).toBe(true);
    for (const field of ['volumeChange24h', 'volumeChange7d'] as const) {
      if (want[field] === null) expect(row[field], `${id} ${field}`).toBeNull();
      else expect(close(row[field] as number, want[field]), `${id} ${field} ${row[field]} vs ${want[field]}`).toBe(true);
    }
  }
});

test('/v1/chains is in the OpenAPI document and needs a key', async () => {
  const doc = (await api.getWithoutKey('/v1/openapi.json')).json as { paths: Record<string, unknown> };
  expect(doc.paths['/v1/chains']).toBeDefined();
  expect((await api.getWithoutKey('/v1/chains')).status).toBe(401);
});

// The token-supplies job against the simulated EVM chain over HTTP JSON-RPC, on the real store: the
// contracts discovered assets' listings give on the configured chain's platform are read by
// eth_call, and the API serves their total supply, decimals and source; a contract that reverts or
// has no code stays unknown, a platform no chain is configured for is not asked, and a node that
// cannot be reached stores nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvmChainModel, startEvmChainServer, type EvmChainServer, type SimToken } from '../../../../simulator/evmChain.ts';
import { useTestApi } from '../../../../test/support/apiHarness.ts';
import { computeIndex, silentLog, trade } from '../../../../test/support/harness.ts';
import { chainConfig, type ChainConfig } from '../chainsConfig.ts';
import { defaultTokenSupplies, readTokenSupplies } from '../tokenSupplies.ts';

const T = Date.now();
const nowSecond = Math.floor(T / 1000);
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

const tokx: SimToken = { address: address(0xa1), symbol: 'TOKX', name: 'Tokx Network', decimals: 18, usd: 1, totalSupply: 1_000_000n * 10n ** 18n + 5n * 10n ** 17n };
const toky: SimToken = { address: address(0xa2), symbol: 'TOKY', name: 'Toky On Chain', decimals: 6, usd: 1, totalSupply: 42_000_000n };
const revr: SimToken = { address: address(0xa3), symbol: 'REVR', decimals: 18, usd: 1, reverts: true };
const noCode = address(0xa4);

let server: EvmChainServer;
let chain: ChainConfig;
beforeAll(async () => {
  const model = new EvmChainModel({ seed: 5, genesisTs: nowSecond - 100, tokens: [tokx, toky, revr] });
  model.mine({ ts: nowSecond - 50 });
  server = await startEvmChainServer({ model });
  chain = chainConfig.parse({ id: 'simchain', name: 'Simulated', rpcUrl: server.url, platform: 'ethereum', factories: [{ address: address(0xf1), kind: 'v2', dex: 'simswap-v2' }] });
});
afterAll(() => server.close());

const listings: [asset: string, market: string, baseName: string, contracts: Record<string, string>][] = [
  ['tokx--kucoin', 'TOKX-USDT', '', { ethereum: tokx.address }],
  // The venue's name wins over the contract's; only the platform the chain answered for has decimals.
  ['toky--kucoin', 'TOKY-USDT', 'Toky Venue Name', { tron: 'TXyzAbC123', ethereum: toky.address }],
  ['revr--kucoin', 'REVR-USDT', '', { ethereum: revr.address }],
  ['nocode--kucoin', 'NOCODE-USDT', '', { ethereum: noCode }],
  ['bsc--kucoin', 'BSC-USDT', '', { 'binance-smart-chain': tokx.address }],
];

describe('token supplies from a configured chain', () => {
  let firstRun: Awaited<ReturnType<typeof readTokenSupplies>>;
  const api = useTestApi({
    keyName: 'token-supplies-test',
    seed: async (store) => {
      await store.insert(
        'trades',
        listings.map(([asset, market], i) => trade({ venue: 'kucoin', market, asset, quote: 'USDT', trade_id: `t${i}`, ts: (nowSecond - 3) * 1000, price: 2 + i, quantity: 10 * (i + 1) })),
      );
      await store.insert(
        'market_connections',
        listings.map(([asset, market, base_name, base_contracts]) => ({ asset, venue: 'kucoin', market, quote: 'USDT', ts: T - 10_000, received_at: T - 10_000, connected: true, base_name, base_contracts })),
      );
      await computeIndex(store, T + 2_500);
      const today = new Date(T).toISOString().slice(0, 10);
      await store.insert('fx_reference_rates', Object.entries({ ars: 1_200.5, brl: 5.25, sek: 10.5 }).map(([currency, per_usd]) => ({ date: today, currency, per_usd, source: 'test', imported_at: T })));
      firstRun = await readTokenSupplies({ store, log: silentLog }, [chain]);
    },
  });

  it('reads each contract on the configured platform by eth_call, four calls each; a revert and an address without code are counted failed', () => {
    expect(firstRun).toEqual({ due: 4, read: 2, failed: 2 });
    expect(server.calls.eth_call).toBe(16);
  });

  it('/v1/coins/{id}: total supply over 10^decimals from the chain, source chain:<platform>, decimals on that platform, circulating unknown (market cap 0), FDV = price x total supply', async () => {
    const res = await api.get('/v1/coins/tokx--kucoin');
    expect(res.status, res.text).toBe(200);
    const coin = res.json as { name: string; detail_platforms: Record<string, unknown>; market_data: Record<string, unknown> & { current_price: { usd: number }; fully_diluted_valuation: { usd: number }; market_cap: { usd: number } } };
    expect(coin.name).toBe('Tokx Network');
    expect(coin.detail_platforms).toEqual({ ethereum: { contract_address: tokx.address, decimal_place: '18' } });
    expect(coin.market_data).toMatchObject({ total_supply: 1_000_000.5, circulating_supply: 0, max_supply: null, supply_source: 'chain:ethereum' });
    expect(coin.market_data.market_cap.usd).toBe(0);
    expect(coin.market_data.fully_diluted_valuation.usd).toBeCloseTo(coin.market_data.current_price.usd * 1_000_000.5, 6);

    const toky = (await api.get('/v1/coins/toky--kucoin')).json as { name: string; detail_platforms: unknown; market_data: Record<string, unknown> };
    expect(toky.name).toBe('Toky Venue Name');
    expect(toky.detail_platforms).toEqual({ tron: { contract_address: 'TXyzAbC123', decimal_place: null }, ethereum: { contract_address: address(0xa2), decimal_place: '6' } });
    expect(toky.market_data).toMatchObject({ total_supply: 42, supply_source: 'chain:ethereum' });
  });

  it('a contract that reverted, one without code and one on a platform without a chain: supply unknown, served all the same; ranked with the unknowns by volume', async () => {
    for (const id of ['revr--kucoin', 'nocode--kucoin', 'bsc--kucoin']) {
      const res = await api.get(`/v1/coins/${id}`);
      expect(res.status, res.text).toBe(200);
      expect((res.json as { market_data: Record<string, unknown> }).market_data, id).toMatchObject({ total_supply: 0, circulating_supply: 0, supply_source: 'unknown' });
    }
    // Every one of them has a market cap of 0: ranked by 24 h volume, which grows down the listing here.
    const coins = (await api.get('/v1/coins')).json as { coins: { id: string }[] };
    expect(coins.coins.map((c) => c.id)).toEqual(['bsc--kucoin', 'nocode--kucoin', 'revr--kucoin', 'toky--kucoin', 'tokx--kucoin']);
  });

  it('a contract is asked again only once refreshMs has passed; a node that cannot be reached, or serves another chain, fails the run after the other chains are read, and stores nothing of its own', async () => {
    const store = api.store;
    // Counted as merges leave them: one row per contract with FINAL; rows written since a time are each the newest of their contract.
    const contracts = async () => (await store.rows<{ n: number }>('SELECT count() AS n FROM token_supplies FINAL'))[0]!.n;
    const writtenSince = async (since: number) =>
      (await store.rows<{ n: number }>('SELECT count() AS n FROM token_supplies WHERE checked_at >= fromUnixTimestamp64Milli({since:Int64})', { since }))[0]!.n;
    expect(await contracts()).toBe(4);
    const mark = Date.now();
    expect(await readTokenSupplies({ store, log: silentLog }, [chain])).toEqual({ due: 0, read: 0, failed: 0 });
    expect(server.calls.eth_call).toBe(16);
    const later = Date.now() + defaultTokenSupplies.refreshMs;
    const down = { ...chain, rpcUrl: 'http://127.0.0.1:1' };
    await expect(readTokenSupplies({ store, log: silentLog }, [down], defaultTokenSupplies, later)).rejects.toThrow(/request to the RPC endpoint failed/);
    await expect(readTokenSupplies({ store, log: silentLog }, [{ ...chain, chainId: 1 }], defaultTokenSupplies, later)).rejects.toThrow('simchain: the RPC endpoint serves chain id 31337, configured 1');
    expect(await writtenSince(mark)).toBe(0);
    expect(server.calls.eth_call).toBe(16);
    // The chain that answers is read even when another one fails in the same run, which then fails.
    await expect(readTokenSupplies({ store, log: silentLog }, [chain, { ...down, id: 'down', platform: 'binance-smart-chain' }], defaultTokenSupplies, later)).rejects.toThrow(/request to the RPC endpoint failed/);
    expect(await writtenSince(mark)).toBe(4);
    expect(await contracts()).toBe(4);
    expect(server.calls.eth_call).toBe(32);
    expect(await readTokenSupplies({ store, log: silentLog }, [chain], defaultTokenSupplies, later)).toEqual({ due: 0, read: 0, failed: 0 });
  });
});

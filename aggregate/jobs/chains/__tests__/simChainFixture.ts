// Shared by the DEX indexer and /v1/chains tests: a simulated chain whose tokens are valued
// through the catalog (a stablecoin by its Ethereum contract address) and through explicit
// mappings (WETH -> ethereum, WBTC -> bitcoin), index trades to value them with, and the
// valuation rules written out again in plain TS to recompute every USD figure independently.
import { trade, type TradeRow } from '../../../../test/support/harness.ts';
import { catalogAssets } from '../../../../infra/catalog/catalog.ts';
import { defaultSimFactories, defaultSimTokens, EvmChainModel, type SimSwap, type SimToken } from '../../../../simulator/evmChain.ts';
import { chainConfig, type ChainConfig } from '../chainsConfig.ts';

export const hour = 3_600;

const stable = catalogAssets.find((a) => a.stablecoin && a.platforms.ethereum?.decimal_place != null);
if (!stable) throw new Error('the catalog has no stablecoin with an Ethereum contract: these tests need one');
const stableContract = stable.platforms.ethereum!;

export const [weth, wbtc, , simx] = defaultSimTokens as [SimToken, SimToken, SimToken, SimToken];
/** A USD stablecoin at the catalog's own Ethereum address: valued at par through the catalog. */
export const stableToken: SimToken = { address: stableContract.contract_address.toLowerCase(), symbol: stable.symbol, decimals: stableContract.decimal_place!, usd: 1 };
export const simTokens = [weth, wbtc, stableToken, simx];

const rank = (id: string) => catalogAssets.findIndex((a) => a.id === id);
/** token -> what values it: asset, decimals, at par or not, catalog rank. SIMX is valued by nothing. */
export const valuedTokens = new Map([
  [weth.address, { asset: 'ethereum', decimals: 18, par: false, rank: rank('ethereum') }],
  [wbtc.address, { asset: 'bitcoin', decimals: 8, par: false, rank: rank('bitcoin') }],
  [stableToken.address, { asset: stable.id, decimals: stableToken.decimals, par: true, rank: rank(stable.id) }],
]);

/** A trade per asset every 10 minutes over [fromTs, toTs]; bitcoin has none inside `btcHole`. */
export function indexTrades(fromTs: number, toTs: number, btcHole = { from: 0, to: 0 }): TradeRow[] {
  const trades: TradeRow[] = [];
  for (let t = fromTs, i = 0; t <= toTs; t += 600, i++) {
    trades.push(trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: `e${i}`, ts: t * 1000, price: 3_000 + 150 * Math.sin(i / 7), quantity: 1 }));
    if (t < btcHole.from || t >= btcHole.to)
      trades.push(trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: `b${i}`, ts: t * 1000, price: 60_000 + 900 * Math.cos(i / 5), quantity: 1 }));
  }
  return trades;
}

/** USD value of a swap by the documented rule, from the raw trades: null when no leg is valued. */
export function expectedUsd(s: SimSwap, trades: readonly TradeRow[]): number | null {
  const priceAt = (asset: string) => trades.filter((t) => t.asset === asset && t.ts / 1000 <= s.ts && s.ts - t.ts / 1000 <= hour).at(-1)?.price;
  const legs = [
    { token: s.token0, raw: s.amount0In + s.amount0Out },
    { token: s.token1, raw: s.amount1In + s.amount1Out },
  ].flatMap((leg) => {
    const v = valuedTokens.get(leg.token);
    const price = v && (v.par ? 1 : priceAt(v.asset));
    return v && price !== undefined ? [{ ...leg, ...v, price }] : [];
  });
  const pick = legs.find((l) => l.par) ?? legs.sort((a, b) => a.rank - b.rank)[0];
  return pick ? (Number(pick.raw) / 10 ** pick.decimals) * pick.price : null;
}

/** Block 1 creates every pool on both factories; then `blocks - 1` blocks of random swaps (none where `quiet(ts)`). */
export function buildChain(options: { seed: number; genesisTs: number; blocks: number; blockTimeS: number; quiet?: (ts: number) => boolean }): EvmChainModel {
  const model = new EvmChainModel({ seed: options.seed, genesisTs: options.genesisTs, blockTimeS: options.blockTimeS, tokens: simTokens });
  for (const f of defaultSimFactories) {
    for (const [a, b] of [[weth, stableToken], [wbtc, weth], [wbtc, simx], [simx, stableToken]] as const) model.createPool(f, a.address, b.address);
  }
  model.mine();
  growChain(model, options.blocks - 1, options.seed, options.blockTimeS, options.quiet);
  return model;
}

/** Mines `blocks` blocks with 0-3 random swaps each (deterministic per seed). */
export function growChain(model: EvmChainModel, blocks: number, seed: number, blockTimeS: number, quiet?: (ts: number) => boolean): void {
  for (let i = 0; i < blocks; i++) {
    const ts = model.block(model.head)!.timestamp + blockTimeS;
    if (!quiet?.(ts)) model.randomSwaps((i * 7 + seed) % 4);
    model.mine();
  }
}

/** The chain's CHAINS_CONFIG entry: platform ethereum (catalog addresses), WETH and WBTC mapped explicitly. */
export function simChainConfig(id: string, url: string, extra: Record<string, unknown> = {}): ChainConfig {
  return chainConfig.parse({
    id,
    name: `Test chain ${id}`,
    rpcUrl: url,
    platform: 'ethereum',
    confirmations: 3,
    startBlock: 0,
    maxBlockRange: 500,
    factories: defaultSimFactories.map((f) => ({ address: f.address, kind: f.kind, dex: f.dex })),
    tokens: { [weth.address]: { asset: 'ethereum', decimals: 18 }, [wbtc.address]: { asset: 'bitcoin', decimals: 8 } },
    ...extra,
  });
}

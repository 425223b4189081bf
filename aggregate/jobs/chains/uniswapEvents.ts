// Uniswap V2 and V3 style events: the factory's pool creation and the pool's Swap.
// Layouts and topic0 values: research/methodology.md 8.1-8.2 (V2: Uniswap/v2-core UniswapV2Pair,
// V3: Uniswap/v3-core IUniswapV3PoolEvents and IUniswapV3Factory). Forks that keep these exact
// signatures (most V2 forks, several V3 forks) decode with the same code.
import { decodeEventLog, parseAbiItem, toEventSelector, type Hex } from 'viem';
import type { RpcLog } from './jsonRpc.ts';

export type PoolKind = 'v2' | 'v3';

export const uniswapEvents = {
  v2: {
    // The last field is allPairsLength; its name does not change the signature.
    poolCreated: parseAbiItem('event PairCreated(address indexed token0, address indexed token1, address pair, uint256 allPairsLength)'),
    swap: parseAbiItem(
      'event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)',
    ),
  },
  v3: {
    poolCreated: parseAbiItem(
      'event PoolCreated(address indexed token0, address indexed token1, uint24 indexed fee, int24 tickSpacing, address pool)',
    ),
    swap: parseAbiItem(
      'event Swap(address indexed sender, address indexed recipient, int256 amount0, int256 amount1, uint160 sqrtPriceX96, uint128 liquidity, int24 tick)',
    ),
  },
} as const;

/** topic0 of each event we read, by kind. */
export const eventTopics = {
  v2: { poolCreated: toEventSelector(uniswapEvents.v2.poolCreated), swap: toEventSelector(uniswapEvents.v2.swap) },
  v3: { poolCreated: toEventSelector(uniswapEvents.v3.poolCreated), swap: toEventSelector(uniswapEvents.v3.swap) },
} as const;

/** Every topic0 the indexer asks eth_getLogs for (one OR filter on topics[0]). */
export const indexedTopics: Hex[] = [
  eventTopics.v2.poolCreated,
  eventTopics.v2.swap,
  eventTopics.v3.poolCreated,
  eventTopics.v3.swap,
];

export interface PoolCreation {
  pool: string;
  token0: string;
  token1: string;
  /** V3 fee tier in hundredths of a bip (500 = 0.05 %); null for V2 pairs (0.3 % fixed in the pair). */
  fee: number | null;
}

/**
 * Token amounts of one swap, in raw integer units, as V2 reports them: what the trader paid
 * into the pool (in) and took out (out). V3's signed deltas map onto it: a positive amount went
 * into the pool, a negative one left it.
 */
export interface SwapAmounts {
  amount0In: bigint;
  amount1In: bigint;
  amount0Out: bigint;
  amount1Out: bigint;
}

const lower = (a: string) => a.toLowerCase();

/** Decodes a factory's PairCreated (v2) or PoolCreated (v3) log. Throws on a log of another shape. */
export function decodePoolCreation(kind: PoolKind, log: Pick<RpcLog, 'topics' | 'data'>): PoolCreation {
  if (kind === 'v2') {
    const { args } = decodeEventLog({ abi: [uniswapEvents.v2.poolCreated], topics: log.topics as [Hex, ...Hex[]], data: log.data, strict: true });
    return { pool: lower(args.pair), token0: lower(args.token0), token1: lower(args.token1), fee: null };
  }
  const { args } = decodeEventLog({ abi: [uniswapEvents.v3.poolCreated], topics: log.topics as [Hex, ...Hex[]], data: log.data, strict: true });
  return { pool: lower(args.pool), token0: lower(args.token0), token1: lower(args.token1), fee: args.fee };
}

/** Decodes a pool's Swap log into in/out amounts. Throws on a log of another shape. */
export function decodeSwap(kind: PoolKind, log: Pick<RpcLog, 'topics' | 'data'>): SwapAmounts {
  if (kind === 'v2') {
    const { args } = decodeEventLog({ abi: [uniswapEvents.v2.swap], topics: log.topics as [Hex, ...Hex[]], data: log.data, strict: true });
    return { amount0In: args.amount0In, amount1In: args.amount1In, amount0Out: args.amount0Out, amount1Out: args.amount1Out };
  }
  const { args } = decodeEventLog({ abi: [uniswapEvents.v3.swap], topics: log.topics as [Hex, ...Hex[]], data: log.data, strict: true });
  const split = (delta: bigint) => (delta >= 0n ? { into: delta, out: 0n } : { into: 0n, out: -delta });
  const a0 = split(args.amount0);
  const a1 = split(args.amount1);
  return { amount0In: a0.into, amount1In: a1.into, amount0Out: a0.out, amount1Out: a1.out };
}

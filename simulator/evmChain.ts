// A SIMULATED EVM chain served over Ethereum JSON-RPC on loopback: blocks with hashes, parent
// hashes and timestamps; Uniswap V2/V3 style factories creating pools and pools emitting Swap
// logs, ABI-encoded exactly as the contracts encode them (viem's encodeEventTopics and
// encodeAbiParameters); eth_call of its tokens' ERC-20 metadata; and reorgs on demand. The DEX
// indexer reads it as it reads a real node.
import { randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeAbiParameters, encodeEventTopics, keccak256, stringToHex, type AbiEvent, type Hex } from 'viem';
import type { z } from 'zod';
import type { chainConfig } from '../aggregate/jobs/chains/chainsConfig.ts';
import { toHex } from '../aggregate/jobs/chains/jsonRpc.ts';
import { uniswapEvents, type PoolKind, type SwapAmounts } from '../aggregate/jobs/chains/uniswapEvents.ts';
import { seededRandom, simulatedContract } from './market.ts';
import type { SyntheticAsset } from './universe.ts';

export interface SimToken {
  address: string;
  symbol: string;
  decimals: number;
  /** The simulation's own USD value of one token: it only sizes swap amounts. */
  usd: number;
  /** What name() answers (eth_call); the symbol when unset. */
  name?: string;
  /** What totalSupply() answers, in base units; 0 when unset. */
  totalSupply?: bigint;
  /** Every eth_call to it reverts, as a contract that is not ERC-20 does. */
  reverts?: boolean;
}

export interface SimFactory {
  address: string;
  kind: PoolKind;
  dex: string;
}

export interface SimPool {
  pool: string;
  factory: string;
  kind: PoolKind;
  dex: string;
  token0: string;
  token1: string;
  fee: number | null;
  createdBlock: number;
}

/** A swap as the chain emitted it: what the tests recompute figures from. */
export interface SimSwap extends SwapAmounts {
  block: number;
  blockHash: string;
  /** Block timestamp, unix seconds. */
  ts: number;
  tx: string;
  logIndex: number;
  pool: string;
  dex: string;
  token0: string;
  token1: string;
}

/** A log in eth_getLogs' JSON shape. */
export interface SimLog {
  address: string;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash: string;
  transactionHash: string;
  transactionIndex: Hex;
  logIndex: Hex;
  removed: false;
}

interface SimBlock {
  number: number;
  hash: string;
  parentHash: string;
  timestamp: number;
  txs: string[];
  logs: SimLog[];
  swaps: SimSwap[];
  pools: SimPool[];
}

type Action = { type: 'pool'; pool: SimPool } | { type: 'swap'; pool: SimPool; amounts: SwapAmounts };

const simAddress = (label: string) => `0x${keccak256(stringToHex(`simulated:${label}`)).slice(-40)}`;

/**
 * The ERC-20 token of each made-up asset, at the contract the simulated KuCoin publishes for it
 * (simulatedContract): its ticker and name, 18 decimals, and a total supply fixed by its key, sized
 * so that it is worth between 1 million and 10 billion USD at the asset's start price (log-uniform),
 * as real tokens are: the token-supplies job reads the same figure every run.
 */
export function syntheticTokens(assets: readonly SyntheticAsset[]): SimToken[] {
  return assets.map((asset) => {
    const draw = Number(BigInt(keccak256(stringToHex(`simulated:supply:${asset.key}`)).slice(0, 18)) % 1_000_000n) / 1_000_000;
    const wholeTokens = BigInt(Math.max(1, Math.round(10 ** (6 + 4 * draw) / asset.startPrice)));
    return { address: simulatedContract(asset.key), symbol: asset.ticker, name: asset.name, decimals: 18, usd: asset.startPrice, totalSupply: wholeTokens * 10n ** 18n };
  });
}

/** Tokens of the default simulated chain: a wrapped native coin, a BTC wrapper, a USD stablecoin and a token nobody prices. */
export const defaultSimTokens: readonly SimToken[] = [
  { address: simAddress('token:WETH'), symbol: 'WETH', decimals: 18, usd: 3_000 },
  { address: simAddress('token:WBTC'), symbol: 'WBTC', decimals: 8, usd: 60_000 },
  { address: simAddress('token:USDC'), symbol: 'USDC', decimals: 6, usd: 1 },
  { address: simAddress('token:SIMX'), symbol: 'SIMX', decimals: 18, usd: 0.25 },
];

export const defaultSimFactories: readonly SimFactory[] = [
  { address: simAddress('factory:v2'), kind: 'v2', dex: 'simswap-v2' },
  { address: simAddress('factory:v3'), kind: 'v3', dex: 'simswap-v3' },
];

export interface EvmChainModelOptions {
  /** Seeds the random swaps and is part of the genesis hash: another seed is another chain. */
  seed?: number;
  /** Timestamp of block 0, unix seconds. */
  genesisTs: number;
  /**
   * The newest blocks kept with their logs (default 5,000); older ones are pruned, as a node
   * with history expiry prunes them: their headers and logs are answered with an error. The
   * genesis header is always kept.
   */
  retainBlocks?: number;
  /** Seconds between blocks when `mine` is given no time. */
  blockTimeS?: number;
  tokens?: readonly SimToken[];
  factories?: readonly SimFactory[];
}

const defaultRetainBlocks = 5_000;

/** The chain asked for blocks it no longer keeps. */
export class PrunedHistoryError extends Error {
  override name = 'PrunedHistoryError';
}

/** The chain itself: canonical blocks (the newest `retainBlocks` of them), pending actions, and reorgs. */
export class EvmChainModel {
  readonly tokens: readonly SimToken[];
  readonly factories: readonly SimFactory[];
  readonly retainBlocks: number;
  /** The tokens by lower-case address: the demo's chain holds thousands (the universe's). */
  readonly #tokenAt: ReadonlyMap<string, SimToken>;
  /** Canonical blocks from `#firstKept` to the head. */
  readonly #blocks: SimBlock[] = [];
  #firstKept = 0;
  readonly #genesis: SimBlock;
  readonly #seed: number;
  readonly #blockTimeS: number;
  readonly #random: () => number;
  /** Pools created (mined or pending), and those mined on the canonical chain: few, kept whole. */
  readonly #pools = new Map<string, SimPool>();
  #minedPools: SimPool[] = [];
  #pending: Action[] = [];
  /** Changes with every reorg, so a replacement block never has the hash of the block it replaces. */
  #fork = 0;

  constructor(options: EvmChainModelOptions) {
    this.tokens = options.tokens ?? defaultSimTokens;
    this.#tokenAt = new Map(this.tokens.map((t) => [t.address.toLowerCase(), t]));
    this.factories = options.factories ?? defaultSimFactories;
    this.retainBlocks = options.retainBlocks ?? defaultRetainBlocks;
    if (!Number.isSafeInteger(this.retainBlocks) || this.retainBlocks < 2) throw new RangeError(`retainBlocks must be an integer >= 2, got ${this.retainBlocks}`);
    this.#seed = options.seed ?? 1;
    this.#blockTimeS = options.blockTimeS ?? 12;
    this.#random = seededRandom(this.#seed);
    this.#genesis = this.mine({ ts: options.genesisTs });
  }

  /** The token at `address` (any case), if the chain holds one there. */
  token(address: string): SimToken | undefined {
    return this.#tokenAt.get(address.toLowerCase());
  }

  get head(): number {
    return this.#firstKept + this.#blocks.length - 1;
  }

  /** The oldest block whose header and logs are still served (besides the genesis header). */
  get oldestKept(): number {
    return this.#firstKept;
  }

  /** A canonical block; undefined above the head and for pruned blocks (genesis excepted). */
  block(n: number): SimBlock | undefined {
    return n === 0 ? this.#genesis : this.#blocks[n - this.#firstKept];
  }

  /** True for a block below the head that is no longer kept. */
  pruned(n: number): boolean {
    return n > 0 && n < this.#firstKept;
  }

  /** Pools created so far (mined or pending). */
  get pools(): SimPool[] {
    return [...this.#pools.values()];
  }

  /** Queues a pool creation (in the next mined block); the address is derived from factory, tokens and fee, as CREATE2 does. */
  createPool(factory: SimFactory, tokenA: string, tokenB: string, fee: number | null = factory.kind === 'v3' ? 3_000 : null): SimPool {
    const [token0, token1] = [tokenA.toLowerCase(), tokenB.toLowerCase()].sort() as [string, string];
    const pool: SimPool = {
      pool: simAddress(`pool:${factory.address}:${token0}:${token1}:${fee}`),
      factory: factory.address,
      kind: factory.kind,
      dex: factory.dex,
      token0,
      token1,
      fee,
      createdBlock: -1,
    };
    if (this.#pools.has(pool.pool)) throw new Error(`pool ${pool.pool} exists`);
    this.#pools.set(pool.pool, pool);
    this.#pending.push({ type: 'pool', pool });
    return pool;
  }

  /** Queues one swap on `pool` with the given in/out amounts (V3 pools emit them as signed deltas). */
  swap(pool: SimPool, amounts: SwapAmounts): void {
    this.#pending.push({ type: 'swap', pool, amounts });
  }

  /** Queues `count` swaps of random size and direction on random pools. */
  randomSwaps(count: number): void {
    const pools = this.pools;
    if (pools.length === 0) return;
    for (let i = 0; i < count; i++) {
      const pool = pools[Math.floor(this.#random() * pools.length)]!;
      const zeroForOne = this.#random() < 0.5;
      const tokenIn = this.#token(zeroForOne ? pool.token0 : pool.token1);
      const tokenOut = this.#token(zeroForOne ? pool.token1 : pool.token0);
      // Log-uniform trade sizes from $10 to $100k; 0.3 % fee on the way out.
      const usd = 10 * 10 ** (4 * this.#random());
      const amountIn = units(usd / tokenIn.usd, tokenIn.decimals);
      const amountOut = units((usd * 0.997) / tokenOut.usd, tokenOut.decimals);
      this.swap(
        pool,
        zeroForOne
          ? { amount0In: amountIn, amount1In: 0n, amount0Out: 0n, amount1Out: amountOut }
          : { amount0In: 0n, amount1In: amountIn, amount0Out: amountOut, amount1Out: 0n },
      );
    }
  }

  /** Seals the pending actions into a new block (at `ts`, or one block time after the head). */
  mine(options: { ts?: number } = {}): SimBlock {
    const parent = this.#blocks.at(-1);
    const number = parent ? parent.number + 1 : 0;
    const timestamp = options.ts ?? parent!.timestamp + this.#blockTimeS;
    const actions = this.#pending;
    this.#pending = [];
    const txs = actions.map((_, i) => keccak256(stringToHex(`tx:${number}:${i}:${this.#fork}`)));
    const parentHash = parent?.hash ?? `0x${'0'.repeat(64)}`;
    const hash = keccak256(stringToHex(`block:${this.#seed}:${number}:${parentHash}:${timestamp}:${this.#fork}:${txs.join(',')}`));
    const block: SimBlock = { number, hash, parentHash, timestamp, txs, logs: [], swaps: [], pools: [] };
    actions.forEach((action, i) => {
      const base = {
        blockNumber: toHex(number),
        blockHash: hash,
        transactionHash: txs[i]!,
        transactionIndex: toHex(i),
        logIndex: toHex(i),
        removed: false as const,
      };
      if (action.type === 'pool') {
        action.pool.createdBlock = number;
        block.pools.push(action.pool);
        const pairsOfFactory = [...this.#minedPools, ...block.pools].filter((p) => p.factory === action.pool.factory).length;
        block.logs.push({ ...base, ...encodePoolCreated(action.pool, pairsOfFactory) });
      } else {
        const { pool, amounts } = action;
        block.swaps.push({ ...amounts, block: number, blockHash: hash, ts: timestamp, tx: txs[i]!, logIndex: i, pool: pool.pool, dex: pool.dex, token0: pool.token0, token1: pool.token1 });
        block.logs.push({ ...base, ...encodeSwap(pool, amounts, this.#random) });
      }
    });
    this.#blocks.push(block);
    this.#minedPools.push(...block.pools);
    if (this.#blocks.length > this.retainBlocks) {
      this.#blocks.shift();
      this.#firstKept += 1;
    }
    return block;
  }

  /** Drops the newest `depth` blocks (their pools and swaps vanish from the canonical chain); mine again to replace them. */
  reorg(depth: number): void {
    // Never below the oldest kept block.
    const deepest = this.#blocks.length - 1;
    if (depth < 1 || depth > deepest) throw new Error(`reorg depth must be 1..${deepest}`);
    for (const dropped of this.#blocks.splice(this.#blocks.length - depth)) {
      for (const pool of dropped.pools) this.#pools.delete(pool.pool);
      this.#minedPools = this.#minedPools.filter((p) => p.createdBlock < dropped.number);
    }
    for (const action of this.#pending) if (action.type === 'pool') this.#pools.delete(action.pool.pool);
    this.#pending = [];
    this.#fork += 1;
  }

  /** Every swap of the kept canonical blocks, in chain order. */
  swaps(): SimSwap[] {
    return this.#blocks.flatMap((b) => b.swaps);
  }

  /** Pools created on the canonical chain (pruned blocks included). */
  minedPools(): SimPool[] {
    return [...this.#minedPools];
  }

  /** eth_getLogs over the canonical chain; throws PrunedHistoryError when the range reaches a pruned block. */
  logs(filter: { fromBlock: number; toBlock: number; address?: string[]; topics?: (string[] | null)[] }): SimLog[] {
    const from = Math.max(0, filter.fromBlock);
    const to = Math.min(filter.toBlock, this.head);
    // The lowest block of the range besides the genesis (which holds no logs) is the first to be pruned.
    const lowest = Math.max(from, 1);
    if (lowest <= to && this.pruned(lowest))
      throw new PrunedHistoryError(`blocks before ${this.#firstKept} are pruned`);
    const out: SimLog[] = [];
    for (let n = from; n <= to; n++) {
      for (const log of this.block(n)!.logs) {
        if (filter.address && !filter.address.includes(log.address)) continue;
        if (filter.topics?.some((wanted, i) => wanted !== null && !wanted.includes(log.topics[i] ?? ''))) continue;
        out.push(log);
      }
    }
    return out;
  }

  #token(address: string): SimToken {
    const token = this.token(address);
    if (!token) throw new Error(`unknown token ${address}`);
    return token;
  }
}

function units(amount: number, decimals: number): bigint {
  return BigInt(Math.max(1, Math.round(amount * 10 ** decimals)));
}

/** `pairCount`: the factory's number of pairs after this one (V2's allPairsLength). */
function encodePoolCreated(pool: SimPool, pairCount: number): { address: string; topics: Hex[]; data: Hex } {
  if (pool.kind === 'v2') {
    const event = uniswapEvents.v2.poolCreated;
    return {
      address: pool.factory,
      topics: encodeEventTopics({ abi: [event], eventName: 'PairCreated', args: { token0: pool.token0 as Hex, token1: pool.token1 as Hex } }) as Hex[],
      data: eventData(event, [pool.pool as Hex, BigInt(pairCount)]),
    };
  }
  const event = uniswapEvents.v3.poolCreated;
  const tickSpacing = pool.fee === 500 ? 10 : pool.fee === 10_000 ? 200 : 60;
  return {
    address: pool.factory,
    topics: encodeEventTopics({ abi: [event], eventName: 'PoolCreated', args: { token0: pool.token0 as Hex, token1: pool.token1 as Hex, fee: pool.fee ?? 3_000 } }) as Hex[],
    data: eventData(event, [tickSpacing, pool.pool as Hex]),
  };
}

const trader = simAddress('trader') as Hex;

/** The data part of a log: the event's non-indexed fields, ABI-encoded in order. */
function eventData(event: AbiEvent, values: readonly unknown[]): Hex {
  return encodeAbiParameters(event.inputs.filter((p) => !p.indexed), values);
}

function encodeSwap(pool: SimPool, a: SwapAmounts, random: () => number): { address: string; topics: Hex[]; data: Hex } {
  if (pool.kind === 'v2') {
    const event = uniswapEvents.v2.swap;
    return {
      address: pool.pool,
      topics: encodeEventTopics({ abi: [event], eventName: 'Swap', args: { sender: trader, to: trader } }) as Hex[],
      data: eventData(event, [a.amount0In, a.amount1In, a.amount0Out, a.amount1Out]),
    };
  }
  const event = uniswapEvents.v3.swap;
  // Pool balance deltas: what went into the pool is positive, what left it negative.
  const amount0 = a.amount0In - a.amount0Out;
  const amount1 = a.amount1In - a.amount1Out;
  // Price after the swap (token1 per token0, raw units) as sqrt(P) * 2^96 and its tick.
  const price = Number(a.amount1In + a.amount1Out) / Number(a.amount0In + a.amount0Out);
  const sqrtPriceX96 = BigInt(Math.floor(Math.sqrt(price) * 2 ** 96));
  const tick = Math.max(-887_272, Math.min(887_272, Math.floor(Math.log(price) / Math.log(1.0001))));
  const liquidity = BigInt(Math.floor(random() * 1e18));
  return {
    address: pool.pool,
    topics: encodeEventTopics({ abi: [event], eventName: 'Swap', args: { sender: trader, recipient: trader } }) as Hex[],
    data: eventData(event, [amount0, amount1, sqrtPriceX96, liquidity, tick]),
  };
}

export interface EvmChainServerOptions {
  model: EvmChainModel;
  /** 0 = any free port. */
  port?: number;
  chainId?: number;
  /** eth_getLogs answers with Infura's -32005 "query returned more than N results" above this. */
  maxLogsPerQuery?: number;
  /** Called after each call is answered: lets a test change the chain between two calls (a reorg in the middle of a read). */
  afterCall?: (method: string) => void;
}

export interface EvmChainServer {
  url: string;
  /** Calls answered, by method (batched calls counted one by one). */
  calls: Record<string, number>;
  /** eth_getLogs calls refused as too large. */
  limitErrors: number;
  close(): Promise<void>;
}

/** What geth answers (since 1.16, history expiry) for headers and logs it has pruned. */
const prunedHistory = { code: 4444, message: 'pruned history unavailable' };

const quantity = (v: unknown) => (typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v) ? Number(BigInt(v)) : undefined);
const asList = (v: unknown) => (v === undefined || v === null ? undefined : Array.isArray(v) ? v.map((x) => String(x).toLowerCase()) : [String(v).toLowerCase()]);

/**
 * eth_call of the ERC-20 read-only functions (name, symbol, decimals, totalSupply: EIP-20) on the
 * model's tokens, ABI-encoded as a contract returns them. Another address has no code: "0x", as a
 * node answers. Any other function, or a token made to revert, reverts as geth says it (code 3).
 */
function ethCall(model: EvmChainModel, call: { to?: unknown; data?: unknown }, ok: (result: unknown) => object, fail: (code: number, message: string) => object): object {
  const token = model.token(String(call.to));
  if (!token) return ok('0x');
  const reverted = fail(3, 'execution reverted');
  if (token.reverts) return reverted;
  switch (String(call.data).slice(0, 10).toLowerCase()) {
    case '0x06fdde03':
      return ok(encodeAbiParameters([{ type: 'string' }], [token.name ?? token.symbol]));
    case '0x95d89b41':
      return ok(encodeAbiParameters([{ type: 'string' }], [token.symbol]));
    case '0x313ce567':
      return ok(encodeAbiParameters([{ type: 'uint8' }], [token.decimals]));
    case '0x18160ddd':
      return ok(encodeAbiParameters([{ type: 'uint256' }], [token.totalSupply ?? 0n]));
    default:
      return reverted;
  }
}

/** Serves `model` over HTTP JSON-RPC (single and batch requests). */
export async function startEvmChainServer(options: EvmChainServerOptions): Promise<EvmChainServer> {
  const { model } = options;
  const maxLogs = options.maxLogsPerQuery ?? 10_000;
  const calls: Record<string, number> = {};
  const server: EvmChainServer = { url: '', calls, limitErrors: 0, close: async () => undefined };

  type Request = { id?: unknown; method?: unknown; params?: unknown };
  const answer = (req: Request): object => {
    const id = req.id ?? null;
    const method = String(req.method);
    const params = Array.isArray(req.params) ? req.params : [];
    calls[method] = (calls[method] ?? 0) + 1;
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    const fail = (code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
    const blockTag = (tag: unknown) => (tag === 'latest' || tag === 'safe' || tag === 'finalized' ? model.head : tag === 'earliest' ? 0 : quantity(tag));
    switch (method) {
      case 'eth_chainId':
        return ok(toHex(options.chainId ?? 31_337));
      case 'eth_blockNumber':
        return ok(toHex(model.head));
      case 'eth_getBlockByNumber': {
        const n = blockTag(params[0]);
        if (n === undefined) return fail(-32602, 'invalid block number');
        if (model.pruned(n)) return fail(prunedHistory.code, prunedHistory.message);
        const b = model.block(n);
        return ok(b ? { number: toHex(b.number), hash: b.hash, parentHash: b.parentHash, timestamp: toHex(b.timestamp), transactions: b.txs } : null);
      }
      case 'eth_getLogs': {
        const f = (params[0] ?? {}) as Record<string, unknown>;
        const fromBlock = blockTag(f.fromBlock ?? 'latest');
        const toBlock = blockTag(f.toBlock ?? 'latest');
        if (fromBlock === undefined || toBlock === undefined || fromBlock > toBlock) return fail(-32602, 'invalid block range params');
        const topics = Array.isArray(f.topics) ? f.topics.map((t) => asList(t) ?? null) : undefined;
        let logs: SimLog[];
        try {
          logs = model.logs({ fromBlock, toBlock, address: asList(f.address), topics });
        } catch (err) {
          if (err instanceof PrunedHistoryError) return fail(prunedHistory.code, prunedHistory.message);
          throw err;
        }
        if (logs.length > maxLogs) {
          server.limitErrors += 1;
          return fail(-32005, `query returned more than ${maxLogs} results`);
        }
        return ok(logs);
      }
      case 'eth_call':
        return ethCall(model, (params[0] ?? {}) as { to?: unknown; data?: unknown }, ok, fail);
      default:
        return fail(-32601, `the method ${method} does not exist/is not available`);
    }
  };

  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const reply = body === undefined
        ? { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }
        : Array.isArray(body) ? body.map((r) => answer(r as Request)) : answer(body as Request);
      for (const r of Array.isArray(body) ? body : body === undefined ? [] : [body]) options.afterCall?.(String((r as Request).method));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  server.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  server.close = () => new Promise<void>((resolve) => http.close(() => resolve()));
  return server;
}

export interface DemoChain {
  /** The chain as CHAINS_CONFIG describes it (JSON-serializable). */
  config: z.input<typeof chainConfig>;
  model: EvmChainModel;
  close(): Promise<void>;
}

/**
 * Blocks the demo chain keeps: 30 minutes of its 2 s blocks, about 3.4 MB of the main thread's heap
 * (3.8 KB a block by heap snapshots). The model's default, 5,000 blocks, grew that heap by about
 * 0.1 MB a minute for 2.8 hours, which the memory bench's two hours cannot tell from a leak.
 */
export const demoChainRetainBlocks = 900;

/**
 * The demo's simulated chain: pools of every token pair on both factories, then a block every
 * `blockMs` with a few random swaps, timestamped with the wall clock. Its tokens are mapped to
 * catalog assets (WETH -> ethereum, WBTC -> bitcoin, USDC -> usd-coin) so their legs are valued
 * through the index prices of the demo's simulated market; SIMX stays unvalued on purpose. With the
 * universe, it also holds each made-up asset's token (`tokens`, syntheticTokens), for their supplies.
 * Every start is a new chain (the seed, random unless given, is in its genesis hash), so its
 * configuration says `onChainReset: reindex`: the indexer replaces the previous run's history.
 * It keeps the model's last `demoChainRetainBlocks` blocks (30 minutes at the default 2 s per block):
 * the indexer reads a few blocks behind the head every 10 s, so it fails (pruned history) only after
 * 30 minutes without a run.
 */
export async function startDemoChain(options: { seed?: number; blockMs?: number; port?: number; tokens?: readonly SimToken[] } = {}): Promise<DemoChain> {
  const seed = options.seed ?? randomInt(2 ** 32);
  const model = new EvmChainModel({ seed, genesisTs: Math.floor(Date.now() / 1000), tokens: [...defaultSimTokens, ...(options.tokens ?? [])], retainBlocks: demoChainRetainBlocks });
  const [weth, wbtc, usdc, simx] = defaultSimTokens as [SimToken, SimToken, SimToken, SimToken];
  for (const factory of model.factories) {
    for (const [a, b] of [[weth, usdc], [wbtc, weth], [wbtc, usdc], [simx, weth], [simx, usdc]] as const) model.createPool(factory, a.address, b.address);
  }
  model.mine({ ts: Math.floor(Date.now() / 1000) });
  const server = await startEvmChainServer({ model, port: options.port ?? 0 });
  const random = seededRandom(seed);
  const timer = setInterval(() => {
    model.randomSwaps(Math.floor(random() * 6));
    model.mine({ ts: Math.floor(Date.now() / 1000) });
  }, options.blockMs ?? 2_000);
  timer.unref();
  return {
    model,
    config: {
      id: 'simchain',
      name: 'Simulated EVM chain (demo)',
      // It stands in for Ethereum: the simulated KuCoin publishes the made-up assets' contracts on
      // its ERC20 chain (platform ethereum), and the token-supplies job reads them here.
      platform: 'ethereum',
      rpcUrl: server.url,
      chainId: 31_337,
      confirmations: 2,
      startBlock: 0,
      onChainReset: 'reindex',
      backfillDays: 8,
      maxBlockRange: 2_000,
      maxBatch: 50,
      factories: model.factories.map((f) => ({ address: f.address, kind: f.kind, dex: f.dex })),
      tokens: {
        [weth.address]: { asset: 'ethereum', decimals: weth.decimals },
        [wbtc.address]: { asset: 'bitcoin', decimals: wbtc.decimals },
        [usdc.address]: { asset: 'usd-coin', decimals: usdc.decimals },
      },
    },
    async close() {
      clearInterval(timer);
      await server.close();
    },
  };
}

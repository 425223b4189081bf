import type { Config } from '../../../infra/config.ts';
import type { Job } from '../../../infra/jobs.ts';
import type { Logger } from '../../../infra/log.ts';
import type { Store } from '../../../infra/store.ts';
import { loadChainsConfig, type ChainConfig, type FactoryConfig } from './chainsConfig.ts';
import { ChainStore, type BlockRow, type PoolRow, type StoredBlock, type SwapRow } from './chainStore.ts';
import { isLogLimitError, JsonRpcClient, RpcTransportError, type RpcBlock, type RpcLog } from './jsonRpc.ts';
import { tokenBook, valueSwaps, type ValuedToken } from './swapValuation.ts';
import { decodePoolCreation, decodeSwap, eventTopics, indexedTopics, type SwapAmounts } from './uniswapEvents.ts';

// Indexes Uniswap V2/V3 style DEX activity of one EVM chain from JSON-RPC eth_getLogs into
// ClickHouse: pools created by the configured factories and the Swap logs of those pools.
// The method (confirmations, reorgs, valuation, counting) is in aggregate/METHODOLOGY.md, "DEX chains".

/**
 * The node's chain is not the one configured (another eth_chainId), or no longer holds the stored
 * history (another genesis block, or no stored block on it) and the chain's `onChainReset` is `stop`:
 * an operator must look.
 */
export class ChainMismatchError extends Error {
  override name = 'ChainMismatchError';
}

/** The node switched forks while a range was being read (log and header hashes disagree); the next run re-checks. */
export class ChainReorgedWhileReadingError extends Error {
  override name = 'ChainReorgedWhileReadingError';
}

/** Stored blocks compared per round trip while looking for a fork point. */
const forkSearchPage = 64;
/** Ranges in a row that must pass before a halved range is doubled back. */
const passesBeforeGrowing = 8;

export interface CatchUpOptions {
  signal?: AbortSignal;
  /** Unix ms after which no new range is started (the run returns; the next one resumes). */
  deadline?: number;
}

/** What one catch-up did. */
export interface CatchUpResult {
  head: number;
  /** head - confirmations: nothing above it is indexed. */
  safeHead: number;
  /** Highest block indexed after the run; undefined before the first range. */
  indexedTo: number | undefined;
  ranges: number;
  pools: number;
  swaps: number;
  /** Swaps stored without a USD value (neither leg valued). */
  unvalued: number;
  /** Rows dropped because the store already held them (a range indexed twice). */
  duplicates: number;
  /** Logs of an indexed pool or factory with the right topic0 that failed to decode (not stored). */
  malformed: number;
  /** eth_getLogs answers refusing a range as too large (the range was halved). */
  limitErrors: number;
  /** Fork point when a reorg was found and rolled back: the last block that stayed. */
  reorgedAbove: number | undefined;
  /** Why the stored history was deleted and the chain indexed from its start again (onChainReset: reindex). */
  reset: string | undefined;
  /** Pools found by factory backfills. */
  backfilledPools: number;
}

export interface EvmIndexerOptions {
  chain: ChainConfig;
  store: Store;
  log: Logger;
  /** Defaults to a client of chain.rpcUrl. */
  rpc?: JsonRpcClient;
}

type KnownPool = Pick<PoolRow, 'pool' | 'dex' | 'kind' | 'token0' | 'token1'>;

export class EvmIndexer {
  readonly chain: ChainConfig;
  readonly store: Store;
  readonly #log: Logger;
  readonly #rpc: JsonRpcClient;
  readonly #rows: ChainStore;
  readonly #book: Map<string, ValuedToken>;
  readonly #factories: Map<string, FactoryConfig>;
  #pools: Map<string, KnownPool> | undefined;
  #rangeSize: number;
  #passes = 0;

  constructor(options: EvmIndexerOptions) {
    this.chain = options.chain;
    this.store = options.store;
    this.#log = options.log;
    this.#rpc = options.rpc ?? new JsonRpcClient(options.chain.rpcUrl, { maxBatch: options.chain.maxBatch });
    this.#rows = new ChainStore(options.store, options.chain.id);
    this.#book = tokenBook(options.chain);
    this.#factories = new Map(options.chain.factories.map((f) => [f.address, f]));
    this.#rangeSize = options.chain.maxBlockRange;
  }

  /**
   * Indexes from the last stored block up to head - confirmations (or until the deadline), after
   * checking that the stored history is on the node's chain: same genesis block, stored tip still
   * canonical (a reorg is rolled back to its fork point); when it is not, `onChainReset` decides.
   */
  async catchUp(options: CatchUpOptions = {}): Promise<CatchUpResult> {
    const { signal, deadline = Infinity } = options;
    const result: CatchUpResult = {
      head: 0,
      safeHead: 0,
      indexedTo: undefined,
      ranges: 0,
      pools: 0,
      swaps: 0,
      unvalued: 0,
      duplicates: 0,
      malformed: 0,
      limitErrors: 0,
      reorgedAbove: undefined,
      reset: undefined,
      backfilledPools: 0,
    };
    if (this.chain.chainId !== undefined) {
      const reported = await this.#rpc.chainId();
      if (reported !== this.chain.chainId)
        throw new ChainMismatchError(`${this.chain.id}: the RPC endpoint serves chain id ${reported}, configured ${this.chain.chainId}`);
    }
    const [genesis] = await this.#headers([0]);
    const storedGenesis = await this.#rows.genesis();
    if (storedGenesis !== undefined && storedGenesis !== genesis!.hash)
      await this.#reset(`the node's genesis block is ${genesis!.hash}, the stored history's ${storedGenesis}: another chain under this id`, result);
    result.head = await this.#rpc.blockNumber();
    result.safeHead = result.head - this.chain.confirmations;

    let cursor = await this.#rows.cursor();
    if (cursor) {
      const lastGood = await this.#lastGoodBlock(cursor);
      if (lastGood === undefined) {
        await this.#reset(`no stored block is on the node's chain: a reorg deeper than the stored history, or another chain`, result);
        cursor = undefined;
      } else if (lastGood !== cursor.number) {
        this.#log.warn({ chain: this.chain.id, storedTip: cursor.number, lastGood }, 'reorg: deleting rows above the fork point');
        await this.#rows.deleteAbove(lastGood);
        this.#pools = undefined;
        result.reorgedAbove = lastGood;
        cursor = (await this.#rows.cursor())!;
      }
    }
    if (!cursor) {
      const start = this.chain.startBlock ?? (await this.#blockDaysBefore(result.head, this.chain.backfillDays));
      // The block before the first one indexed marks where the indexed history starts.
      if (start > 0) {
        const [before] = await this.#headers([start - 1]);
        await this.#rows.writeRange({ from: start - 1, to: start - 1, pools: [], swaps: [], blocks: [this.#blockRow(before!)] });
        cursor = { number: start - 1, hash: before!.hash };
      }
    }
    // Only now is the stored history known to be of this genesis (or gone).
    await this.#rows.register(this.chain.name, Date.now(), genesis!.hash);
    const pools = await this.#knownPools();
    let next = cursor ? cursor.number + 1 : 0;
    result.indexedTo = cursor?.number;

    if (!(await this.#backfillFactories(next, pools, result, signal, deadline))) return result;

    try {
      while (next <= result.safeHead && !signal?.aborted && Date.now() < deadline) {
        const to = await this.#indexRange(next, Math.min(next + this.#rangeSize - 1, result.safeHead), cursor === undefined && next === 0, pools, result);
        result.ranges += 1;
        result.indexedTo = to;
        next = to + 1;
      }
    } catch (err) {
      // The failed range may have added pools (of a dead fork, say) to memory only: reload them from the store.
      this.#pools = undefined;
      throw err;
    }
    if (result.ranges > 0 || result.reorgedAbove !== undefined || result.reset !== undefined)
      this.#log.info({ chain: this.chain.id, ...result }, 'chain indexed');
    return result;
  }

  /** Indexes [from, to] (to lowered while the node refuses the range as too large); returns the last block done. */
  async #indexRange(from: number, maxTo: number, withFromHeader: boolean, pools: Map<string, KnownPool>, result: CatchUpResult): Promise<number> {
    // The end header is read BEFORE the logs: if the node switches forks in between, either
    // the log hashes disagree with the headers below, or the stored end hash is the old one
    // and the next run finds the reorg. Either way no log of a dead fork is kept.
    let endHeader: RpcBlock | undefined;
    const { to, logs } = await this.#adaptiveLogs(from, maxTo, { topics: [indexedTopics] }, result, async (to) => {
      [endHeader] = await this.#headers([to]);
    });

    const newPools: PoolRow[] = [];
    const swaps: { log: RpcLog; pool: KnownPool; amounts: SwapAmounts }[] = [];
    // Blocks (and the hashes the logs carry) of every log kept: checked against their headers.
    const kept: { block: number; hash: string }[] = [];
    for (const log of logs) {
      const topic0 = log.topics[0];
      const factory = this.#factories.get(log.address);
      if (factory) {
        if (topic0 !== eventTopics[factory.kind].poolCreated) continue;
        const row = this.#poolRow(factory, log, result);
        if (row) {
          newPools.push(row);
          pools.set(row.pool, row);
          kept.push({ block: log.blockNumber, hash: log.blockHash });
        }
        continue;
      }
      const pool = pools.get(log.address);
      if (!pool || topic0 !== eventTopics[pool.kind].swap) continue; // other contracts' events with the same topic
      try {
        swaps.push({ log, pool, amounts: decodeSwap(pool.kind, log) });
        kept.push({ block: log.blockNumber, hash: log.blockHash });
      } catch (err) {
        result.malformed += 1;
        this.#log.warn({ err, chain: this.chain.id, tx: log.transactionHash, logIndex: log.logIndex }, 'swap log does not decode; skipped');
      }
    }

    const numbers = [...new Set([...kept.map((k) => k.block), ...(withFromHeader ? [from] : [])])].filter((n) => n !== to).sort((a, b) => a - b);
    const headers = new Map<number, RpcBlock>([[to, endHeader!]]);
    for (const h of await this.#headers(numbers)) headers.set(h.number, h);
    for (const k of kept) {
      if (headers.get(k.block)?.hash !== k.hash)
        throw new ChainReorgedWhileReadingError(`${this.chain.id}: block ${k.block} changed while range ${from}-${to} was read`);
    }

    const values = await valueSwaps(
      this.store,
      this.#book,
      swaps.map((s) => ({ ts: headers.get(s.log.blockNumber)!.timestamp, token0: s.pool.token0, token1: s.pool.token1, amounts: s.amounts })),
    );
    const swapRows: SwapRow[] = swaps.map((s, i) => ({
      chain: this.chain.id,
      block: s.log.blockNumber,
      ts: headers.get(s.log.blockNumber)!.timestamp,
      tx: s.log.transactionHash,
      log_index: s.log.logIndex,
      dex: s.pool.dex,
      pool: s.pool.pool,
      amount0_in: s.amounts.amount0In.toString(),
      amount1_in: s.amounts.amount1In.toString(),
      amount0_out: s.amounts.amount0Out.toString(),
      amount1_out: s.amounts.amount1Out.toString(),
      usd: values[i]!.usd,
      usd_token: values[i]!.token,
      usd_by: values[i]!.by,
    }));
    const written = await this.#rows.writeRange({ from, to, pools: newPools, swaps: swapRows, blocks: [...headers.values()].map((h) => this.#blockRow(h)) });
    result.pools += written.pools;
    result.swaps += written.swaps;
    result.duplicates += written.duplicates;
    result.unvalued += written.unvalued;
    this.#log.debug({ chain: this.chain.id, from, to, logs: logs.length, ...written }, 'range indexed');
    return to;
  }

  /**
   * eth_getLogs over [from, maxTo], halving the range while the node answers that it is too
   * large; the range size found is kept for the next ranges and doubled back after a run of
   * successes. `beforeEach` runs before every attempt with the range end being tried.
   */
  async #adaptiveLogs(
    from: number,
    maxTo: number,
    filter: { address?: string; topics: (string | string[] | null)[] },
    result: CatchUpResult,
    beforeEach?: (to: number) => Promise<void>,
  ): Promise<{ to: number; logs: RpcLog[] }> {
    let to = maxTo;
    for (;;) {
      await beforeEach?.(to);
      try {
        const logs = (await this.#rpc.logs({ fromBlock: from, toBlock: to, ...filter }))
          .filter((l) => !l.removed)
          .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
        this.#passes += 1;
        if (this.#passes >= passesBeforeGrowing && this.#rangeSize < this.chain.maxBlockRange) {
          this.#rangeSize = Math.min(this.chain.maxBlockRange, this.#rangeSize * 2);
          this.#passes = 0;
        }
        return { to, logs };
      } catch (err) {
        if (!isLogLimitError(err) || to === from) throw err;
        result.limitErrors += 1;
        to = from + Math.floor((to - from) / 2);
        this.#rangeSize = to - from + 1;
        this.#passes = 0;
        this.#log.debug({ chain: this.chain.id, from, to, err: (err as Error).message }, 'eth_getLogs range too large; halved');
      }
    }
  }

  /**
   * Reads each factory's pool creations from its deployment block up to where the main pass
   * started, so swaps on pools older than the indexed history are counted. Returns false while
   * a backfill is unfinished: the main pass waits, since it would miss swaps of unknown pools.
   */
  async #backfillFactories(mainStart: number, pools: Map<string, KnownPool>, result: CatchUpResult, signal: AbortSignal | undefined, deadline: number): Promise<boolean> {
    for (const factory of this.chain.factories) {
      if (factory.fromBlock === undefined) continue;
      let scan = await this.#rows.factoryScan(factory.address);
      if (!scan) {
        scan = { next_block: factory.fromBlock, end_block: Math.max(factory.fromBlock, mainStart) };
        await this.#rows.saveFactoryScan(factory.address, scan);
      }
      while (scan.next_block < scan.end_block) {
        if (signal?.aborted || Date.now() >= deadline) return false;
        const { to, logs } = await this.#adaptiveLogs(
          scan.next_block,
          Math.min(scan.next_block + this.#rangeSize - 1, scan.end_block - 1),
          { address: factory.address, topics: [eventTopics[factory.kind].poolCreated] },
          result,
        );
        const found = logs.flatMap((log) => this.#poolRow(factory, log, result) ?? []);
        result.backfilledPools += await this.#rows.writeBackfilledPools(found);
        for (const p of found) pools.set(p.pool, p);
        scan = { ...scan, next_block: to + 1 };
        await this.#rows.saveFactoryScan(factory.address, scan);
      }
    }
    return true;
  }

  #poolRow(factory: FactoryConfig, log: RpcLog, result: CatchUpResult): PoolRow | undefined {
    try {
      const created = decodePoolCreation(factory.kind, log);
      return {
        chain: this.chain.id,
        dex: factory.dex,
        kind: factory.kind,
        factory: factory.address,
        ...created,
        created_block: log.blockNumber,
        created_tx: log.transactionHash,
        created_log_index: log.logIndex,
      };
    } catch (err) {
      result.malformed += 1;
      this.#log.warn({ err, chain: this.chain.id, tx: log.transactionHash, logIndex: log.logIndex }, 'pool creation log does not decode; skipped');
      return undefined;
    }
  }

  /**
   * The stored history is not on the node's chain. `stop`: refuse (every run fails, the history stays);
   * `reindex`: delete it, so this run indexes the chain from its start.
   */
  async #reset(reason: string, result: CatchUpResult): Promise<void> {
    if (this.chain.onChainReset === 'stop')
      throw new ChainMismatchError(`${this.chain.id}: ${reason}; nothing is indexed and the stored history is kept (onChainReset: stop)`);
    this.#log.error({ chain: this.chain.id, reason }, 'chain reset: deleting the stored history of this chain and indexing it again from its start (onChainReset: reindex)');
    await this.#rows.deleteAll();
    this.#pools = undefined;
    result.reset = reason;
  }

  /** The newest stored block that the node still has with the same hash (the cursor itself when there was no reorg); undefined when none is. */
  async #lastGoodBlock(cursor: StoredBlock): Promise<number | undefined> {
    let below = cursor.number + 1;
    for (;;) {
      const stored = await this.#rows.recentBlocks(below, below === cursor.number + 1 ? 1 : forkSearchPage);
      if (stored.length === 0) return undefined;
      const current = await this.#rpc.blocks(stored.map((s) => s.number));
      const match = stored.findIndex((s, i) => current[i]?.hash === s.hash);
      if (match >= 0) return stored[match]!.number;
      below = stored.at(-1)!.number;
    }
  }

  /** The first block whose timestamp is at or after head's minus `days` (binary search over headers). */
  async #blockDaysBefore(head: number, days: number): Promise<number> {
    const [top] = await this.#headers([head]);
    const target = top!.timestamp - days * 86_400;
    let lo = 0;
    let hi = head;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const [h] = await this.#headers([mid]);
      if (h!.timestamp >= target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  async #headers(numbers: number[]): Promise<RpcBlock[]> {
    const headers = await this.#rpc.blocks(numbers);
    return headers.map((h, i) => {
      if (!h) throw new RpcTransportError(`${this.chain.id}: the node has no block ${numbers[i]}`);
      return h;
    });
  }

  async #knownPools(): Promise<Map<string, KnownPool>> {
    this.#pools ??= new Map((await this.#rows.pools()).map((p) => [p.pool, p]));
    return this.#pools;
  }

  #blockRow(h: RpcBlock): BlockRow {
    return { chain: this.chain.id, number: h.number, hash: h.hash, parent_hash: h.parentHash, ts: h.timestamp };
  }
}

/** Time budget of one run: later blocks are left to the next run, so a stop is never waited on long. */
const runBudgetMs = 60_000;

/** The indexer of one chain as a scheduled job: every 10 s it catches up to head - confirmations. */
export function chainIndexerJob(chain: ChainConfig): Job {
  // Built now so a token mapped to an unknown asset stops the process at start.
  tokenBook(chain);
  let indexer: EvmIndexer | undefined;
  return {
    name: `chain-indexer-${chain.id}`,
    everyMs: 10_000,
    async run({ store, log, signal }) {
      if (indexer?.store !== store) indexer = new EvmIndexer({ chain, store, log });
      await indexer.catchUp({ signal, deadline: Date.now() + runBudgetMs });
    },
  };
}

/** One job per chain of CHAINS_CONFIG (none when it is unset). */
export function chainIndexerJobs(config: Pick<Config, 'CHAINS_CONFIG'>): Job[] {
  return loadChainsConfig(config.CHAINS_CONFIG).map(chainIndexerJob);
}

import type { Store } from '../../../infra/store.ts';
import type { PoolKind } from './uniswapEvents.ts';

// The DEX indexer's tables (migrations 0060-0064), read and written for one chain.

export interface PoolRow {
  chain: string;
  dex: string;
  kind: PoolKind;
  factory: string;
  pool: string;
  token0: string;
  token1: string;
  fee: number | null;
  created_block: number;
  created_tx: string;
  created_log_index: number;
}

export interface SwapRow {
  chain: string;
  block: number;
  /** Unix seconds. */
  ts: number;
  tx: string;
  log_index: number;
  dex: string;
  pool: string;
  /** Raw integer amounts as decimal strings (UInt256 does not fit a JSON number). */
  amount0_in: string;
  amount1_in: string;
  amount0_out: string;
  amount1_out: string;
  usd: number | null;
  usd_token: string;
  usd_by: string;
}

export interface BlockRow {
  chain: string;
  number: number;
  hash: string;
  parent_hash: string;
  /** Unix seconds. */
  ts: number;
}

export interface StoredBlock {
  number: number;
  hash: string;
}

export interface FactoryScan {
  next_block: number;
  end_block: number;
}

export interface RangeWrite {
  from: number;
  to: number;
  pools: PoolRow[];
  swaps: SwapRow[];
  blocks: BlockRow[];
}

/** What a write added; rows the store already held are not written again. */
export interface RangeWritten {
  pools: number;
  swaps: number;
  /** Swaps written without a USD value. */
  unvalued: number;
  duplicates: number;
}

export class ChainStore {
  readonly #store: Store;
  readonly #chain: string;

  constructor(store: Store, chain: string) {
    this.#store = store;
    this.#chain = chain;
  }

  /** Records the chain (its display name and the genesis hash of the chain whose history is stored) at a run. */
  async register(name: string, at: number, genesisHash: string): Promise<void> {
    await this.#store.insert('chain_registry', [{ chain: this.#chain, name, updated_at: at, genesis_hash: genesisHash }]);
  }

  /** The genesis hash the stored history belongs to; undefined before it was first recorded. */
  async genesis(): Promise<string | undefined> {
    const [row] = await this.#store.rows<{ genesis: string }>(
      'SELECT argMax(genesis_hash, updated_at) AS genesis FROM chain_registry WHERE chain = {chain:String} HAVING count() > 0',
      { chain: this.#chain },
    );
    return row?.genesis || undefined;
  }

  /** The highest block indexed so far: the next range starts after it. */
  async cursor(): Promise<StoredBlock | undefined> {
    const [row] = await this.recentBlocks(Number.MAX_SAFE_INTEGER, 1);
    return row;
  }

  /** Stored blocks below `below`, newest first. */
  async recentBlocks(below: number, limit: number): Promise<StoredBlock[]> {
    return this.#store.rows<StoredBlock>(
      `SELECT number, hash FROM chain_blocks FINAL
       WHERE chain = {chain:String} AND number < {below:UInt64}
       ORDER BY number DESC LIMIT {limit:UInt32}`,
      { chain: this.#chain, below, limit },
    );
  }

  async pools(): Promise<PoolRow[]> {
    return this.#store.rows<PoolRow>('SELECT * FROM chain_pools FINAL WHERE chain = {chain:String}', { chain: this.#chain });
  }

  async factoryScan(factory: string): Promise<FactoryScan | undefined> {
    const [row] = await this.#store.rows<FactoryScan>(
      'SELECT next_block, end_block FROM chain_factory_scans FINAL WHERE chain = {chain:String} AND factory = {factory:String}',
      { chain: this.#chain, factory },
    );
    return row;
  }

  async saveFactoryScan(factory: string, scan: FactoryScan): Promise<void> {
    await this.#store.insert('chain_factory_scans', [{ chain: this.#chain, factory, ...scan }]);
  }

  /**
   * Writes one indexed range: pools, then swaps, then its blocks, which move the cursor. A crash
   * in between leaves the cursor behind, so the range is indexed again; rows already held are
   * dropped first, so that adds nothing.
   */
  async writeRange(range: RangeWrite): Promise<RangeWritten> {
    const params = { chain: this.#chain, from: range.from, to: range.to };
    const heldPools = new Set(
      range.pools.length === 0
        ? []
        : (
            await this.#store.rows<{ pool: string }>('SELECT pool FROM chain_pools WHERE chain = {chain:String} AND pool IN {pools:Array(String)}', {
              ...params,
              pools: range.pools.map((p) => p.pool),
            })
          ).map((r) => r.pool),
    );
    const heldSwaps = new Set(
      range.swaps.length === 0
        ? []
        : (
            await this.#store.rows<{ block: number; log_index: number }>(
              'SELECT block, log_index FROM chain_swaps WHERE chain = {chain:String} AND block >= {from:UInt64} AND block <= {to:UInt64}',
              params,
            )
          ).map((r) => `${r.block}:${r.log_index}`),
    );
    const heldBlocks = new Set(
      (
        await this.#store.rows<{ number: number }>(
          'SELECT number FROM chain_blocks WHERE chain = {chain:String} AND number >= {from:UInt64} AND number <= {to:UInt64}',
          params,
        )
      ).map((r) => r.number),
    );
    const pools = range.pools.filter((p) => !heldPools.has(p.pool));
    const swaps = range.swaps.filter((s) => !heldSwaps.has(`${s.block}:${s.log_index}`));
    const blocks = range.blocks.filter((b) => !heldBlocks.has(b.number));
    await this.#store.insert('chain_pools', pools);
    await this.#store.insert('chain_swaps', swaps);
    await this.#store.insert('chain_blocks', blocks);
    return {
      pools: pools.length,
      swaps: swaps.length,
      unvalued: swaps.filter((s) => s.usd === null).length,
      duplicates: range.pools.length - pools.length + range.swaps.length - swaps.length,
    };
  }

  /** Pools of a factory backfill (below the indexed history: no swaps, no blocks). */
  async writeBackfilledPools(pools: PoolRow[]): Promise<number> {
    if (pools.length === 0) return 0;
    const held = new Set(
      (
        await this.#store.rows<{ pool: string }>('SELECT pool FROM chain_pools WHERE chain = {chain:String} AND pool IN {pools:Array(String)}', {
          chain: this.#chain,
          pools: pools.map((p) => p.pool),
        })
      ).map((r) => r.pool),
    );
    const fresh = pools.filter((p) => !held.has(p.pool));
    await this.#store.insert('chain_pools', fresh);
    return fresh.length;
  }

  /**
   * Deletes what was indexed above `lastGood` (a reorg's fork point): swaps, pools created there
   * and block hashes, so the range is indexed again from the canonical chain. Blocks go last: if
   * this is cut short, the cursor still points above the fork and the next run deletes again.
   */
  async deleteAbove(lastGood: number): Promise<void> {
    await this.#delete({ block: lastGood }, [
      'DELETE FROM chain_swaps WHERE chain = {chain:String} AND block > {block:UInt64}',
      'DELETE FROM chain_pools WHERE chain = {chain:String} AND created_block > {block:UInt64}',
      'DELETE FROM chain_blocks WHERE chain = {chain:String} AND number > {block:UInt64}',
    ]);
  }

  /**
   * Deletes everything indexed for this chain (a reset chain is indexed again from its start).
   * Blocks go last: if this is cut short, the cursor is still there and the next run deletes again.
   */
  async deleteAll(): Promise<void> {
    await this.#delete({}, [
      'DELETE FROM chain_swaps WHERE chain = {chain:String}',
      'DELETE FROM chain_pools WHERE chain = {chain:String}',
      'DELETE FROM chain_factory_scans WHERE chain = {chain:String}',
      'DELETE FROM chain_blocks WHERE chain = {chain:String}',
    ]);
  }

  async #delete(params: Record<string, unknown>, queries: string[]): Promise<void> {
    for (const query of queries) await this.#store.client.command({ query, query_params: { chain: this.#chain, ...params } });
  }
}

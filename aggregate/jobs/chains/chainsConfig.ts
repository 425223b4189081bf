import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../../infra/config.ts';
import { evmAddressPattern } from '../../../infra/events.ts';

/** A 20-byte hex address, kept lowercase: logs, tables and lookups compare it as a plain string. */
export const evmAddress = z
  .string()
  .regex(evmAddressPattern, 'must be a 0x-prefixed 20-byte hex address')
  .transform((a) => a.toLowerCase());

const slug = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be a lowercase slug (a-z, 0-9, -)');

/** A factory whose pools we index. `kind` names the event layout (research/methodology.md 8.2). */
export const factoryConfig = z.object({
  address: evmAddress,
  /** v2: PairCreated + Swap(in/out amounts); v3: PoolCreated + Swap(signed pool deltas). */
  kind: z.enum(['v2', 'v3']),
  /** Name of the DEX deployment, e.g. uniswap-v3: dexes24h counts distinct names. */
  dex: slug,
  /**
   * Block the factory was deployed in. When it is before the chain's start block, the indexer
   * first reads the factory's pool creations from here (pools only, no swaps), so that swaps on
   * older pools are counted; without it, only pools created from the start block on are known.
   */
  fromBlock: z.number().int().nonnegative().optional(),
});
export type FactoryConfig = z.infer<typeof factoryConfig>;

/** A token the catalog cannot map by contract address (wrapped native coins, simulated tokens). */
const tokenConfig = z.object({
  /** Catalog id whose USD value the token carries, e.g. WETH -> ethereum. */
  asset: slug,
  decimals: z.number().int().min(0).max(77),
});

export const chainConfig = z
  .object({
    /** Our id of the chain, served in /v1/chains; e.g. ethereum. */
    id: slug,
    name: z.string().min(1),
    rpcUrl: z.string().url(),
    /** When set, the indexer refuses an RPC endpoint that reports another eth_chainId. */
    chainId: z.number().int().positive().optional(),
    /** Key of this chain in the catalog's `platforms` (contract addresses); defaults to `id`. */
    platform: slug.optional(),
    /** Blocks below the head that are never indexed, so most reorgs never reach stored rows. */
    confirmations: z.number().int().min(0).max(10_000).default(12),
    /**
     * What the indexer does when the node's chain no longer holds the stored history: its genesis
     * block is another one (a reset devnet, the demo's simulated chain at each start, or a wrong
     * endpoint serving the same chain id), or no stored block is on the node's chain (a reorg deeper
     * than the stored history). `stop` (public chains, where either means an operator must look):
     * every run fails with ChainMismatchError, logged as an error, and the stored history stays
     * served as it is. `reindex` (devnets, simulated chains): the chain's stored rows are deleted,
     * with an error-level log line, and the chain is indexed again from its start.
     */
    onChainReset: z.enum(['stop', 'reindex']).default('stop'),
    /** First block whose swaps are indexed. Unset: the block about `backfillDays` before the head at the first run. */
    startBlock: z.number().int().nonnegative().optional(),
    /** Days of history indexed at the first run when startBlock is unset (8 gives volumeChange7d a full window). */
    backfillDays: z.number().positive().max(365).default(8),
    /** Largest block range of one eth_getLogs; it is halved while the node answers with a result-limit error. */
    maxBlockRange: z.number().int().positive().max(1_000_000).default(2_000),
    /** Largest JSON-RPC batch (block headers are read in batches); 1 disables batching. */
    maxBatch: z.number().int().positive().max(1_000).default(50),
    factories: z.array(factoryConfig).min(1),
    /** Tokens valued through a catalog asset by explicit mapping (address -> asset, decimals); wins over the catalog. */
    tokens: z.record(evmAddress, tokenConfig).default({}),
  })
  .transform((c) => ({ ...c, platform: c.platform ?? c.id }));
export type ChainConfig = z.infer<typeof chainConfig>;

export const chainsConfig = z
  .object({ chains: z.array(chainConfig) })
  .refine((c) => new Set(c.chains.map((x) => x.id)).size === c.chains.length, { message: 'chain ids must be unique' });

/**
 * Reads CHAINS_CONFIG: the JSON itself (starting with `{`) or the path of a JSON file. Unset =
 * no chain. A wrong value stops the process with a message naming the variable and the field.
 */
export function loadChainsConfig(value: string | undefined): ChainConfig[] {
  if (value === undefined || value.trim() === '') return [];
  const text = value.trim();
  let json: unknown;
  try {
    if (text.startsWith('{')) json = JSON.parse(text);
    else if (existsSync(text)) json = JSON.parse(readFileSync(text, 'utf8'));
    else throw new Error(`no such file: ${text}`);
  } catch (err) {
    throw new ConfigError(`CHAINS_CONFIG: ${(err as Error).message}`);
  }
  const parsed = chainsConfig.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  CHAINS_CONFIG ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data.chains;
}

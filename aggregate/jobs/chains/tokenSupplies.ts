// ERC-20 metadata of discovered assets' contracts, from the chains of CHAINS_CONFIG: for each contract
// a venue's listing gives a discovered asset (market_connections.base_contracts) on a configured
// chain's platform, eth_call of name(), symbol(), decimals() and totalSupply() (EIP-20:
// https://eips.ethereum.org/EIPS/eip-20), stored in token_supplies. The universe serves the total
// supply and the decimals from there (infra/catalog/assetUniverse.ts). A contract that reverts, has
// no code or answers something that is not ERC-20 is stored with its error and stays unknown; a node
// that cannot be reached, or serves another chain id than the configured one, fails the run
// (retried) after the other chains are read, and leaves what was stored of its contracts as it was.
import { decodeAbiParameters, hexToString, type Hex } from 'viem';
import { evmAddressPattern, maxBaseNameLength } from '../../../infra/events.ts';
import type { Job } from '../../../infra/jobs.ts';
import type { Logger } from '../../../infra/log.ts';
import type { Store } from '../../../infra/store.ts';
import { contractKey, loadListedContracts, type ListedContracts } from '../../../infra/catalog/assetUniverse.ts';
import type { Config } from '../../../infra/config.ts';
import { loadChainsConfig, type ChainConfig } from './chainsConfig.ts';
import { ChainMismatchError } from './evmIndexer.ts';
import { JsonRpcClient, JsonRpcError } from './jsonRpc.ts';

/** The ERC-20 read-only functions' selectors (first 4 bytes of keccak256 of the signature). */
export const erc20Selectors = { name: '0x06fdde03', symbol: '0x95d89b41', decimals: '0x313ce567', totalSupply: '0x18160ddd' } as const;

/** Most decimals served: the catalog's bound on `decimal_place` (infra/catalog/catalog.ts). */
const maxDecimals = 36;

export interface TokenSuppliesOptions {
  /** A contract is read again once its last read (or failure) is this old. */
  refreshMs: number;
  /** Contracts read in one run at most, the least recently read first: the rest wait for the next run. */
  maxPerRun: number;
}

export const defaultTokenSupplies: TokenSuppliesOptions = { refreshMs: 6 * 60 * 60_000, maxPerRun: 200 };

export interface DueContract {
  chain: ChainConfig;
  address: string;
}

/**
 * The contracts to read now: every listed contract on a configured chain's platform (the first
 * chain of a platform) that is an EVM address, never read or last read `refreshMs` ago or more;
 * never read first, then the least recently read, at most `maxPerRun`.
 */
export function dueContracts(
  listed: readonly ListedContracts[],
  lastChecked: ReadonlyMap<string, number>,
  chains: readonly ChainConfig[],
  now: number,
  options: TokenSuppliesOptions = defaultTokenSupplies,
): DueContract[] {
  const chainOf = new Map<string, ChainConfig>();
  for (const c of chains) if (!chainOf.has(c.platform)) chainOf.set(c.platform, c);
  const due = new Map<string, DueContract & { checked: number }>();
  for (const { contracts } of listed) {
    for (const [platform, raw] of Object.entries(contracts)) {
      const chain = chainOf.get(platform);
      const address = raw.toLowerCase();
      if (!chain || !evmAddressPattern.test(address)) continue;
      const key = contractKey(platform, address);
      const checked = lastChecked.get(key) ?? Number.NEGATIVE_INFINITY;
      if (checked > now - options.refreshMs) continue;
      due.set(key, { chain, address, checked });
    }
  }
  return [...due.entries()]
    .sort(([ka, a], [kb, b]) => a.checked - b.checked || (ka < kb ? -1 : 1))
    .slice(0, options.maxPerRun)
    .map(([, { chain, address }]) => ({ chain, address }));
}

/** What a contract answered: its metadata, or why it could not be read. */
export type TokenRead = { name: string; symbol: string; decimals: number; totalSupply: bigint } | { error: string };

/** A uint256 return value; undefined for anything else ("0x" from an address without code, short data). */
export function decodeUint(data: Hex): bigint | undefined {
  try {
    return decodeAbiParameters([{ type: 'uint256' }], data)[0];
  } catch {
    return undefined;
  }
}

/**
 * A name() or symbol() return value: an ABI string, or a bytes32 (older tokens: MKR, SAI), with
 * control characters removed and trimmed; '' when unreadable or longer than any name.
 */
export function decodeText(data: Hex): string {
  let text: string;
  try {
    text = decodeAbiParameters([{ type: 'string' }], data)[0];
  } catch {
    if (data.length !== 66) return '';
    text = hexToString(data, { size: 32 });
  }
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean.length <= maxBaseNameLength ? clean : '';
}

/** The four answers of a contract, as TokenRead: decimals and totalSupply are needed, name and symbol are optional in EIP-20. */
export function tokenRead(answers: { name?: Hex; symbol?: Hex; decimals?: Hex | Error; totalSupply?: Hex | Error }): TokenRead {
  const { decimals: d, totalSupply: s } = answers;
  if (d instanceof Error) return { error: `decimals(): ${d.message}` };
  if (s instanceof Error) return { error: `totalSupply(): ${s.message}` };
  const decimals = d === undefined ? undefined : decodeUint(d);
  const totalSupply = s === undefined ? undefined : decodeUint(s);
  if (decimals === undefined || totalSupply === undefined) return { error: `not an ERC-20 answer (decimals ${d ?? 'none'}, totalSupply ${s ?? 'none'}): no contract there, or not a token` };
  if (decimals > BigInt(maxDecimals)) return { error: `decimals() ${decimals} is more than ${maxDecimals}` };
  return { name: answers.name ? decodeText(answers.name) : '', symbol: answers.symbol ? decodeText(answers.symbol) : '', decimals: Number(decimals), totalSupply };
}

/** Reads one contract. A revert is an answer (an Error in TokenRead); a failed exchange with the node is thrown. */
export async function readToken(rpc: JsonRpcClient, address: string): Promise<TokenRead> {
  const call = async (selector: string): Promise<Hex | Error> => {
    try {
      return await rpc.ethCall(address, selector);
    } catch (err) {
      if (err instanceof JsonRpcError) return err;
      throw err;
    }
  };
  const [name, symbol, decimals, totalSupply] = await Promise.all([call(erc20Selectors.name), call(erc20Selectors.symbol), call(erc20Selectors.decimals), call(erc20Selectors.totalSupply)]);
  return tokenRead({
    ...(name instanceof Error ? {} : { name }),
    ...(symbol instanceof Error ? {} : { symbol }),
    decimals,
    totalSupply,
  });
}

/** A client of the chain's node, once it serves the configured chain id (as the indexer checks it). */
async function checkedClient(chain: ChainConfig): Promise<JsonRpcClient> {
  const rpc = new JsonRpcClient(chain.rpcUrl, { maxBatch: chain.maxBatch });
  if (chain.chainId !== undefined) {
    const reported = await rpc.chainId();
    if (reported !== chain.chainId) throw new ChainMismatchError(`${chain.id}: the RPC endpoint serves chain id ${reported}, configured ${chain.chainId}`);
  }
  return rpc;
}

export interface TokenSupplyRow {
  platform: string;
  address: string;
  chain: string;
  name: string;
  symbol: string;
  decimals: number;
  total_supply: string;
  error: string;
  checked_at: number;
}

/**
 * Reads the due contracts and stores what each answered; returns the counts. A chain whose node
 * cannot be reached (or serves another chain id) is left for this run while the others are read;
 * then the run fails with that chain's error, so that it is logged and retried.
 */
export async function readTokenSupplies(
  deps: { store: Store; log: Logger; signal?: AbortSignal },
  chains: readonly ChainConfig[],
  options: TokenSuppliesOptions = defaultTokenSupplies,
  now = Date.now(),
): Promise<{ due: number; read: number; failed: number }> {
  const { store, log, signal } = deps;
  const [listed, checked] = await Promise.all([
    loadListedContracts(store),
    store.rows<{ platform: string; address: string; checked: number }>(
      'SELECT platform, address, toUnixTimestamp64Milli(max(checked_at)) AS checked FROM token_supplies GROUP BY platform, address',
    ),
  ]);
  const due = dueContracts(listed, new Map(checked.map((c) => [contractKey(c.platform, c.address), c.checked])), chains, now, options);
  const clients = new Map<string, JsonRpcClient>();
  const chainErrors = new Map<string, unknown>();
  const rows: TokenSupplyRow[] = [];
  let failed = 0;
  for (const { chain, address } of due) {
    if (signal?.aborted) break;
    if (chainErrors.has(chain.id)) continue;
    let result: TokenRead;
    try {
      let rpc = clients.get(chain.id);
      if (!rpc) clients.set(chain.id, (rpc = await checkedClient(chain)));
      result = await readToken(rpc, address);
    } catch (err) {
      chainErrors.set(chain.id, err);
      continue;
    }
    const base = { platform: chain.platform, address, chain: chain.id, checked_at: Date.now() };
    if ('error' in result) {
      failed += 1;
      log.warn({ chain: chain.id, address, error: result.error }, 'token contract not read: its supply stays unknown');
      rows.push({ ...base, name: '', symbol: '', decimals: 0, total_supply: '', error: result.error });
    } else {
      rows.push({ ...base, name: result.name, symbol: result.symbol, decimals: result.decimals, total_supply: result.totalSupply.toString(), error: '' });
    }
  }
  await store.insert('token_supplies', rows);
  const counts = { due: due.length, read: rows.length - failed, failed };
  if (due.length > 0) log.info({ ...counts, chainsFailed: [...chainErrors.keys()] }, 'token supplies read from chain');
  for (const [id, err] of chainErrors) log.warn({ chain: id, err }, 'token supplies: chain not read this run');
  if (chainErrors.size > 0) throw chainErrors.values().next().value;
  return counts;
}

/**
 * The job: every minute, the contracts due (defaultTokenSupplies): a new listing's supply is served
 * a minute after its contract is stored; a run with nothing due costs two small reads.
 */
export function tokenSuppliesJob(chains: readonly ChainConfig[], options: TokenSuppliesOptions = defaultTokenSupplies): Job {
  return {
    name: 'token-supplies',
    everyMs: 60_000,
    async run({ store, log, signal }) {
      await readTokenSupplies({ store, log, signal }, chains, options);
    },
  };
}

/** The job when CHAINS_CONFIG names a chain; none otherwise. */
export function tokenSuppliesJobs(config: Pick<Config, 'CHAINS_CONFIG'>): Job[] {
  const chains = loadChainsConfig(config.CHAINS_CONFIG);
  return chains.length > 0 ? [tokenSuppliesJob(chains)] : [];
}

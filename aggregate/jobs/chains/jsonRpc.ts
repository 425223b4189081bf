// A small Ethereum JSON-RPC client over HTTP (https://ethereum.org/en/developers/docs/apis/json-rpc/):
// the few methods the indexer needs, batch requests, and every answer checked with zod.
import { z } from 'zod';
import { evmAddressPattern } from '../../../infra/events.ts';

const hexQuantity = z.string().regex(/^0x[0-9a-fA-F]+$/, 'must be a hex quantity');
const hexData = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, 'must be hex data');
const hash32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 32-byte hash').transform((h) => h.toLowerCase() as `0x${string}`);
const quantity = hexQuantity.transform((h) => Number(BigInt(h)));

/** A log as eth_getLogs returns it (only the fields the indexer reads). */
export const rpcLog = z.object({
  address: z.string().regex(evmAddressPattern).transform((a) => a.toLowerCase()),
  topics: z.array(hash32),
  data: hexData.transform((d) => d as `0x${string}`),
  blockNumber: quantity,
  blockHash: hash32,
  transactionHash: hash32,
  logIndex: quantity,
  removed: z.boolean().optional(),
});
export type RpcLog = z.infer<typeof rpcLog>;

/** A block header as eth_getBlockByNumber(n, false) returns it; null when the node has no such block. */
export const rpcBlock = z
  .object({ number: quantity, hash: hash32, parentHash: hash32, timestamp: quantity })
  .nullable();
export type RpcBlock = NonNullable<z.infer<typeof rpcBlock>>;

const rpcResponse = z.object({
  id: z.union([z.number(), z.string(), z.null()]),
  result: z.unknown().optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});

/** The node answered with a JSON-RPC error object. */
export class JsonRpcError extends Error {
  override name = 'JsonRpcError';
  readonly code: number;
  constructor(method: string, code: number, message: string) {
    super(`${method}: ${message} (code ${code})`);
    this.code = code;
  }
}

/** The HTTP exchange failed, or the answer was not a JSON-RPC response of the expected shape. */
export class RpcTransportError extends Error {
  override name = 'RpcTransportError';
  readonly status: number | undefined;
  constructor(message: string, status?: number, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

/**
 * True for the ways nodes and providers refuse an eth_getLogs that is too large: Infura's
 * -32005 "query returned more than 10000 results", Alchemy's "Log response size exceeded",
 * geth/erigon/BSC "exceed maximum block range", "query exceeds max results", Ankr's "block range
 * is too wide", and HTTP 413. The indexer answers them by halving the block range.
 */
export function isLogLimitError(err: unknown): boolean {
  if (err instanceof RpcTransportError) return err.status === 413;
  if (!(err instanceof JsonRpcError)) return false;
  if (err.code === -32005) return true;
  return /more than \d+ results|response size|max(imum)? (results|block range)|block range|range (is )?too (wide|large|big)|too many (results|logs|blocks)|limit(ed)? (to|exceeded)|exceeds? .*limit/i.test(err.message);
}

export interface JsonRpcClientOptions {
  /** Per HTTP request. */
  timeoutMs?: number;
  /** Largest batch sent in one HTTP request; 1 sends every call alone. */
  maxBatch?: number;
}

type Call = { method: string; params: unknown[] };

export class JsonRpcClient {
  readonly url: string;
  readonly #timeoutMs: number;
  readonly #maxBatch: number;
  #nextId = 1;

  constructor(url: string, options: JsonRpcClientOptions = {}) {
    this.url = url;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#maxBatch = options.maxBatch ?? 50;
  }

  async call<S extends z.ZodType>(method: string, params: unknown[], schema: S): Promise<z.output<S>> {
    const [result] = await this.#send([{ method, params }], schema);
    return result as z.output<S>;
  }

  /** Several calls of one result shape, sent as JSON-RPC batches of at most maxBatch; results in call order. */
  async batch<S extends z.ZodType>(calls: readonly Call[], schema: S): Promise<z.output<S>[]> {
    const results: z.output<S>[] = [];
    for (let i = 0; i < calls.length; i += this.#maxBatch) {
      results.push(...(await this.#send(calls.slice(i, i + this.#maxBatch), schema)));
    }
    return results;
  }

  async blockNumber(): Promise<number> {
    return this.call('eth_blockNumber', [], quantity);
  }

  async chainId(): Promise<number> {
    return this.call('eth_chainId', [], quantity);
  }

  /** Headers of the given blocks (null where the node has none), in the order asked. */
  async blocks(numbers: readonly number[]): Promise<(RpcBlock | null)[]> {
    return this.batch(
      numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [toHex(n), false] })),
      rpcBlock,
    );
  }

  /** eth_call at the latest block: the call's return data ("0x" from an address without code); a revert is a JsonRpcError. */
  async ethCall(to: string, data: string): Promise<`0x${string}`> {
    return this.call('eth_call', [{ to, data }, 'latest'], hexData.transform((d) => d as `0x${string}`));
  }

  async logs(filter: { fromBlock: number; toBlock: number; address?: string | string[]; topics?: (string | string[] | null)[] }): Promise<RpcLog[]> {
    const params = { ...filter, fromBlock: toHex(filter.fromBlock), toBlock: toHex(filter.toBlock) };
    return this.call('eth_getLogs', [params], z.array(rpcLog));
  }

  async #send<S extends z.ZodType>(calls: readonly Call[], schema: S): Promise<z.output<S>[]> {
    if (calls.length === 0) return [];
    const requests = calls.map((c) => ({ jsonrpc: '2.0', id: this.#nextId++, method: c.method, params: c.params }));
    const single = requests.length === 1;
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(single ? requests[0] : requests),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      throw new RpcTransportError(`${calls[0]!.method}: request to the RPC endpoint failed: ${(err as Error).message}`, undefined, { cause: err });
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new RpcTransportError(`${calls[0]!.method}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`, res.status);
    }
    // A node may answer a batch with one error object (e.g. batches not supported).
    const parsed = z.array(rpcResponse).safeParse(single || !Array.isArray(body) ? [body] : body);
    if (!parsed.success) throw new RpcTransportError(`${calls[0]!.method}: HTTP ${res.status}, not a JSON-RPC response`, res.status);
    const byId = new Map(parsed.data.map((r) => [r.id, r]));
    return requests.map((req) => {
      const reply = byId.get(req.id) ?? (parsed.data.length === 1 ? parsed.data[0] : undefined);
      if (!reply) throw new RpcTransportError(`${req.method}: no answer to request ${req.id} in the batch`, res.status);
      if (reply.error) throw new JsonRpcError(req.method, reply.error.code, reply.error.message);
      if (!res.ok) throw new RpcTransportError(`${req.method}: HTTP ${res.status}`, res.status);
      const result = schema.safeParse(reply.result);
      if (!result.success) throw new RpcTransportError(`${req.method}: unexpected result: ${result.error.issues[0]?.message ?? ''}`, res.status);
      return result.data;
    });
  }
}

export function toHex(n: number): `0x${string}` {
  return `0x${n.toString(16)}`;
}

import { expect, test } from 'vitest';
import { EvmChainModel } from '../../../../simulator/evmChain.ts';
import { isLogLimitError, JsonRpcError, RpcTransportError } from '../jsonRpc.ts';
import { decodePoolCreation, decodeSwap, eventTopics } from '../uniswapEvents.ts';

// Hand-written ABI encodings (one 32-byte word per field, indexed fields in topics), so the
// decoder is checked against the layout itself, not against viem's own encoder.
const word = (hex: string) => hex.replace(/^0x/, '').padStart(64, '0');
const addressTopic = (a: string) => `0x${word(a)}` as const;
const token0 = '0x6b175474e89094c44da98b954eedeac495271d0f';
const token1 = '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2';
const pool = '0x88e6a0c2ddd26feeb64f039a2c41296fcb3f5640';
const sender = '0x3fc91a3afd70395cd496c647d5a6cc9d4b2b7fad';

test('topic0 of each event is the keccak-256 of its canonical signature (methodology 8.1)', () => {
  expect(eventTopics.v2.swap).toBe('0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822');
  expect(eventTopics.v2.poolCreated).toBe('0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9');
  expect(eventTopics.v3.swap).toBe('0xc42079f94a6350d7e6235f29174924f928cc2ac818eb64fed8004e115fbcca67');
  expect(eventTopics.v3.poolCreated).toBe('0x783cca1c0412dd0d695e784568c96da2e9c22ff989357a2e8b1d9b2b4e6b7118');
});

test('V2 PairCreated: tokens from topics, pair from the first data word', () => {
  const log = {
    topics: [eventTopics.v2.poolCreated, addressTopic(token0), addressTopic(token1)],
    data: `0x${word(pool)}${word('0x1f4a2')}` as const,
  };
  expect(decodePoolCreation('v2', log)).toEqual({ pool, token0, token1, fee: null });
});

test('V3 PoolCreated: fee from topics[3], tickSpacing then pool in data', () => {
  const log = {
    topics: [eventTopics.v3.poolCreated, addressTopic(token0), addressTopic(token1), `0x${word('0x1f4')}` as const],
    data: `0x${word('0xa')}${word(pool)}` as const,
  };
  expect(decodePoolCreation('v3', log)).toEqual({ pool, token0, token1, fee: 500 });
});

test('V2 Swap: four unsigned amounts in data', () => {
  const log = {
    topics: [eventTopics.v2.swap, addressTopic(sender), addressTopic(sender)],
    // 1.5e18 of token0 in, 2,998.5 (6 decimals) of token1 out
    data: `0x${word('0x14d1120d7b160000')}${word('0')}${word('0')}${word('0xb2b97aa0')}` as const,
  };
  expect(decodeSwap('v2', log)).toEqual({ amount0In: 1_500_000_000_000_000_000n, amount1In: 0n, amount0Out: 0n, amount1Out: 2_998_500_000n });
});

test('V3 Swap: signed deltas, negative = out of the pool (two\'s complement)', () => {
  const minusOneMillion = 'f'.repeat(56) + 'fff0bdc0'; // 2^256 - 1,000,000
  const log = {
    topics: [eventTopics.v3.swap, addressTopic(sender), addressTopic(sender)],
    data: `0x${minusOneMillion}${word('0xde0b6b3a7640000')}${word('0x1000000000000000000000000')}${word('0x2386f26fc10000')}${'f'.repeat(59)}fb2c6` as const,
  };
  // amount0 = -1,000,000 (left the pool), amount1 = +1e18 (paid in); tick = -19770 fills the last word
  expect(decodeSwap('v3', log)).toEqual({ amount0In: 0n, amount1In: 1_000_000_000_000_000_000n, amount0Out: 1_000_000n, amount1Out: 0n });
});

test('a log of another shape does not decode', () => {
  const short = { topics: [eventTopics.v2.swap, addressTopic(sender), addressTopic(sender)], data: `0x${word('1')}` as const };
  expect(() => decodeSwap('v2', short)).toThrow();
  const otherEvent = { topics: [eventTopics.v3.swap, addressTopic(sender), addressTopic(sender)], data: `0x${word('1').repeat(4)}` as const };
  expect(() => decodeSwap('v2', otherEvent)).toThrow();
});

test('the simulator encodes what the decoder reads back', () => {
  const model = new EvmChainModel({ genesisTs: 1_700_000_000, seed: 3 });
  const [t0, t1] = model.tokens;
  const pools = model.factories.map((f) => model.createPool(f, t0!.address, t1!.address));
  model.randomSwaps(20);
  const block = model.mine();
  const logs = model.logs({ fromBlock: block.number, toBlock: block.number });
  expect(logs).toHaveLength(22);
  for (const [i, p] of pools.entries()) {
    expect(decodePoolCreation(p.kind, logs[i]!)).toEqual({ pool: p.pool, token0: p.token0, token1: p.token1, fee: p.fee });
  }
  const swaps = model.swaps();
  for (const [i, s] of swaps.entries()) {
    const pool = pools.find((p) => p.pool === s.pool)!;
    expect(decodeSwap(pool.kind, logs[i + 2]!)).toEqual({ amount0In: s.amount0In, amount1In: s.amount1In, amount0Out: s.amount0Out, amount1Out: s.amount1Out });
  }
});

test('the result-limit answers of common nodes and providers are recognised, other errors are not', () => {
  const limits = [
    new JsonRpcError('eth_getLogs', -32005, 'query returned more than 10000 results'),
    new JsonRpcError('eth_getLogs', -32602, 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size'),
    new JsonRpcError('eth_getLogs', -32000, 'exceed maximum block range: 5000'),
    new JsonRpcError('eth_getLogs', -32000, 'query exceeds max results 20000, retry with the range 100-200'),
    new JsonRpcError('eth_getLogs', -32062, 'block range is too wide'),
    new RpcTransportError('eth_getLogs: HTTP 413', 413),
  ];
  for (const err of limits) expect(isLogLimitError(err), err.message).toBe(true);
  const others = [new JsonRpcError('eth_getLogs', -32601, 'method not found'), new RpcTransportError('connection refused'), new Error('boom')];
  for (const err of others) expect(isLogLimitError(err), err.message).toBe(false);
});

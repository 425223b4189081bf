// The token-supplies job's pure parts: which contracts are due, and what an ERC-20 answer reads as.
import { encodeAbiParameters, stringToHex } from 'viem';
import { expect, test } from 'vitest';
import { chainConfig } from '../chainsConfig.ts';
import type { ListedContracts } from '../../../../infra/catalog/assetUniverse.ts';
import { contractKey } from '../../../../infra/catalog/assetUniverse.ts';
import { decodeText, dueContracts, tokenRead } from '../tokenSupplies.ts';

const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const chain = (id: string, platform: string) => chainConfig.parse({ id, name: id, rpcUrl: 'http://127.0.0.1:8545', platform, factories: [{ address: address(0xf1), kind: 'v2', dex: 'x' }] });
const uint = (n: bigint) => encodeAbiParameters([{ type: 'uint256' }], [n]);

test('due: EVM contracts on a configured platform (the first chain of it), never read first, then the least recently read, at most maxPerRun; one read within refreshMs is not due', () => {
  const eth = chain('eth-main', 'ethereum');
  const listed: ListedContracts[] = [
    { asset: 'a--kucoin', contracts: { ethereum: address(1), tron: 'TXyz', solana: 'Es9v' } },
    { asset: 'b--kucoin', contracts: { ethereum: address(2).toUpperCase().replace('0X', '0x') } },
    { asset: 'c--kucoin', contracts: { ethereum: address(3) } },
    { asset: 'd--kucoin', contracts: { ethereum: address(4), 'binance-smart-chain': address(5) } },
    { asset: 'e--kucoin', contracts: { ethereum: 'not-an-address' } },
  ];
  const now = 1_000_000;
  const checked = new Map([
    [contractKey('ethereum', address(1)), now - 500],
    [contractKey('ethereum', address(3)), now - 900],
    [contractKey('ethereum', address(4)), now - 50],
  ]);
  const options = { refreshMs: 100, maxPerRun: 10 };
  const due = dueContracts(listed, checked, [eth, chain('eth-second', 'ethereum')], now, options);
  expect(due.map((d) => [d.chain.id, d.address])).toEqual([
    ['eth-main', address(2)],
    ['eth-main', address(3)],
    ['eth-main', address(1)],
  ]);
  expect(dueContracts(listed, checked, [eth], now, { ...options, maxPerRun: 2 }).map((d) => d.address)).toEqual([address(2), address(3)]);
  expect(dueContracts(listed, checked, [chain('bsc', 'binance-smart-chain')], now, options).map((d) => d.address)).toEqual([address(5)]);
});

test('text: an ABI string, or a bytes32 padded with zeros; control characters dropped, trimmed; unreadable or longer than 100 characters is empty', () => {
  expect(decodeText(encodeAbiParameters([{ type: 'string' }], [' Tokx\u0000 Network\n ']))).toBe('Tokx Network');
  expect(decodeText(stringToHex('Maker', { size: 32 }))).toBe('Maker');
  expect(decodeText('0x')).toBe('');
  expect(decodeText(encodeAbiParameters([{ type: 'string' }], ['x'.repeat(101)]))).toBe('');
  expect(decodeText(encodeAbiParameters([{ type: 'string' }], ['x'.repeat(100)]))).toBe('x'.repeat(100));
});

test('read: decimals and totalSupply needed, name and symbol optional; no code ("0x"), a revert or decimals past 36 are errors', () => {
  expect(tokenRead({ decimals: uint(6n), totalSupply: uint(42_000_000n) })).toEqual({ name: '', symbol: '', decimals: 6, totalSupply: 42_000_000n });
  expect(tokenRead({ name: '0x', symbol: '0x', decimals: '0x', totalSupply: '0x' })).toMatchObject({ error: expect.stringContaining('not an ERC-20 answer') });
  expect(tokenRead({ decimals: new Error('execution reverted'), totalSupply: uint(1n) })).toEqual({ error: 'decimals(): execution reverted' });
  expect(tokenRead({ decimals: uint(18n), totalSupply: new Error('execution reverted') })).toEqual({ error: 'totalSupply(): execution reverted' });
  expect(tokenRead({ decimals: uint(36n), totalSupply: uint(1n) })).toMatchObject({ decimals: 36 });
  expect(tokenRead({ decimals: uint(37n), totalSupply: uint(1n) })).toEqual({ error: 'decimals() 37 is more than 36' });
});

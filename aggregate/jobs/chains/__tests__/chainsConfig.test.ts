import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { ConfigError } from '../../../../infra/config.ts';
import { loadChainsConfig } from '../chainsConfig.ts';

test('CHAINS_CONFIG: defaults filled in, addresses lowercased, errors name the field', () => {
  const factory = { address: '0x5C69bEe701ef814a2B6a3EDD4B1652CB9cc5aA6f', kind: 'v2', dex: 'uniswap-v2', fromBlock: 10_000_835 };
  const [chain] = loadChainsConfig(JSON.stringify({ chains: [{ id: 'ethereum', name: 'Ethereum', rpcUrl: 'http://127.0.0.1:8545', factories: [factory] }] }));
  expect(chain).toMatchObject({ platform: 'ethereum', confirmations: 12, onChainReset: 'stop', backfillDays: 8, maxBlockRange: 2_000, tokens: {} });
  expect(chain!.factories[0]!.address).toBe('0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f');
  expect(loadChainsConfig(undefined)).toEqual([]);
  const bad = JSON.stringify({ chains: [{ id: 'ethereum', name: 'Ethereum', rpcUrl: 'http://x', factories: [{ ...factory, address: '0x12' }] }] });
  expect(() => loadChainsConfig(bad)).toThrow(ConfigError);
  expect(() => loadChainsConfig(bad)).toThrow(/CHAINS_CONFIG chains\.0\.factories\.0\.address/);
  expect(() => loadChainsConfig('/no/such/file.json')).toThrow(/CHAINS_CONFIG: no such file/);
});

test('the example configuration (Uniswap V2 and V3 on Ethereum) loads from its file', () => {
  const [ethereum] = loadChainsConfig(fileURLToPath(new URL('../chains.example.json', import.meta.url)));
  expect(ethereum!.factories.map((f) => [f.kind, f.dex])).toEqual([['v2', 'uniswap-v2'], ['v3', 'uniswap-v3']]);
  expect(Object.values(ethereum!.tokens)).toEqual([{ asset: 'ethereum', decimals: 18 }]);
});

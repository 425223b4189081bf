import { expect, test } from 'vitest';
import { maxBaseContracts, maxContractAddressLength, statusEvent } from '../events.ts';

// The bus boundary's bounds on what a status may carry of its base token's contracts: a collector
// (or anything publishing on `statuses`) cannot grow a row of market_connections without limit.

const status = { type: 'status', venue: 'kucoin', market: 'FOO-USDT', asset: 'foo--kucoin', quote: 'USDT', ts: 1, receivedAt: 1, connected: true };
const contract = (i: number) => ({ platform: `chain-${i}`, address: `0x${String(i).padStart(40, '0')}` });
const accepted = (baseContracts: unknown) => statusEvent.safeParse({ ...status, baseContracts }).success;

test('baseContracts: optional; 1 to maxBaseContracts contracts, one per platform, each a platform slug and an address of at most maxContractAddressLength characters', () => {
  expect(statusEvent.safeParse(status).success).toBe(true);
  expect(accepted([contract(1)])).toBe(true);
  expect(accepted(Array.from({ length: maxBaseContracts }, (_, i) => contract(i)))).toBe(true);
  expect(accepted(Array.from({ length: maxBaseContracts + 1 }, (_, i) => contract(i)))).toBe(false);
  expect(accepted([])).toBe(false);
  expect(accepted([contract(1), { ...contract(2), platform: 'chain-1' }])).toBe(false);
  expect(accepted([{ platform: 'ethereum', address: 'x'.repeat(maxContractAddressLength) }])).toBe(true);
  expect(accepted([{ platform: 'ethereum', address: 'x'.repeat(maxContractAddressLength + 1) }])).toBe(false);
  expect(accepted([{ platform: 'ethereum', address: '' }])).toBe(false);
  expect(accepted([{ platform: 'Ethereum Mainnet', address: '0x1' }])).toBe(false);
  expect(accepted([{ platform: 'p'.repeat(41), address: '0x1' }])).toBe(false);
  expect(maxBaseContracts).toBe(16);
  expect(maxContractAddressLength).toBe(100);
});

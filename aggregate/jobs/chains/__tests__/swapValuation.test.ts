import { expect, test } from 'vitest';
import { findAsset } from '../../../../infra/catalog/catalog.ts';
import { ConfigError } from '../../../../infra/config.ts';
import { chainConfig } from '../chainsConfig.ts';
import { priceAt, priceLookbackSeconds, tokenBook } from '../swapValuation.ts';

const base = {
  id: 'ethereum',
  name: 'Ethereum',
  rpcUrl: 'http://127.0.0.1:8545',
  factories: [{ address: '0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f', kind: 'v2', dex: 'uniswap-v2' }],
};
const contractOf = (id: string) => findAsset(id)!.platforms.ethereum!;

test('the token book maps catalog contracts on the chain platform; USD stablecoins at par, a euro coin not', () => {
  const book = tokenBook(chainConfig.parse(base));
  const usdc = contractOf('usd-coin');
  expect(book.get(usdc.contract_address.toLowerCase())).toMatchObject({ asset: 'usd-coin', decimals: usdc.decimal_place, par: true });
  const eurc = contractOf('euro-coin');
  expect(book.get(eurc.contract_address.toLowerCase())).toMatchObject({ asset: 'euro-coin', par: false });
  const wbtc = contractOf('wrapped-bitcoin');
  expect(book.get(wbtc.contract_address.toLowerCase())).toMatchObject({ asset: 'wrapped-bitcoin', decimals: 8, par: false });
  // Another platform key sees other contracts (or none).
  expect(tokenBook(chainConfig.parse({ ...base, id: 'nowhere' })).size).toBe(0);
});

test('explicit token mappings win over the catalog, and must name a catalog asset', () => {
  const weth = contractOf('weth').contract_address.toLowerCase();
  const book = tokenBook(chainConfig.parse({ ...base, tokens: { [weth]: { asset: 'ethereum', decimals: 18 } } }));
  expect(book.get(weth)).toMatchObject({ asset: 'ethereum', par: false });
  expect(() => tokenBook(chainConfig.parse({ ...base, tokens: { [weth]: { asset: 'no-such-asset', decimals: 18 } } }))).toThrow(ConfigError);
});

test('priceAt: the latest second at or before the swap, no older than the lookback', () => {
  const series = { seconds: [100, 200, 300], prices: [1, 2, 3] };
  expect(priceAt(series, 99)).toBeUndefined();
  expect(priceAt(series, 100)).toBe(1);
  expect(priceAt(series, 299)).toBe(2);
  expect(priceAt(series, 300 + priceLookbackSeconds)).toBe(3);
  expect(priceAt(series, 301 + priceLookbackSeconds)).toBeUndefined();
  expect(priceAt(undefined, 100)).toBeUndefined();
});

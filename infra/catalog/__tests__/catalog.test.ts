import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../config.ts';
import {
  CatalogError,
  bitcoinIssuedBelow,
  catalogAssets,
  catalogCategories,
  findAsset,
  findCategory,
  loadCatalog,
  supplyAt,
  type CatalogAsset,
} from '../catalog.ts';

/** The catalog's first 36 ids, in their order: tables and clients are keyed on them. */
const legacyIds = [
  'bitcoin', 'ethereum', 'tether', 'binancecoin', 'solana', 'usd-coin', 'ripple', 'dogecoin', 'cardano', 'tron',
  'avalanche-2', 'chainlink', 'polkadot', 'the-open-network', 'shiba-inu', 'litecoin', 'bitcoin-cash', 'near',
  'uniswap', 'aptos', 'internet-computer', 'ethereum-classic', 'stellar', 'filecoin', 'cosmos', 'arbitrum',
  'optimism', 'sui', 'hedera-hashgraph', 'injective-protocol', 'render-token', 'aave', 'algorand', 'pepe', 'maker',
  'the-graph',
];

const rawAssets = JSON.parse(readFileSync(new URL('../assets.json', import.meta.url), 'utf8')) as CatalogAsset[];
const rawCategories = JSON.parse(readFileSync(new URL('../categories.json', import.meta.url), 'utf8')) as { id: string }[];

describe('bundled catalog', () => {
  it('validates and is what the module exports', () => {
    const { assets, categories } = loadCatalog();
    expect(assets).toEqual(rawAssets);
    expect(categories).toEqual(rawCategories);
    expect(catalogAssets).toEqual(rawAssets);
  });

  it('has at least 150 assets with unique ids, keeping the legacy ids in their order', () => {
    expect(catalogAssets.length).toBeGreaterThanOrEqual(150);
    const ids = catalogAssets.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => legacyIds.includes(id))).toEqual(legacyIds);
    expect(findAsset('bitcoin')?.symbol).toBe('btc');
  });

  it('has at least 25 categories, every asset category exists and every category has 3+ assets', () => {
    expect(catalogCategories.length).toBeGreaterThanOrEqual(25);
    const counts = new Map(catalogCategories.map((c) => [c.id, 0]));
    for (const asset of catalogAssets) {
      expect(asset.categories.length, asset.id).toBeGreaterThan(0);
      for (const c of asset.categories) {
        expect(findCategory(c), `${asset.id} -> ${c}`).toBeDefined();
        counts.set(c, counts.get(c)! + 1);
      }
    }
    for (const [id, n] of counts) expect(n, id).toBeGreaterThanOrEqual(3);
  });

  it('supply figures are ordered: circulating <= total <= max where max is set', () => {
    for (const { id, supply } of catalogAssets) {
      expect(supply.circulating, id).toBeLessThanOrEqual(supply.total);
      if (supply.max !== null) expect(supply.total, id).toBeLessThanOrEqual(supply.max);
      expect(supply.circulating, id).toBeGreaterThan(0);
    }
  });

  it('flags agree with categories and platforms', () => {
    for (const a of catalogAssets) {
      expect(a.stablecoin, a.id).toBe(a.categories.includes('stablecoins'));
      const isToken = Object.keys(a.platforms).length > 0;
      if (isToken) expect(a.hashing_algorithm, a.id).toBeNull();
      if (a.wrapped) expect(isToken, a.id).toBe(true);
      if (a.categories.includes('proof-of-work')) expect(a.hashing_algorithm, a.id).not.toBeNull();
      expect(a.description.length, a.id).toBeGreaterThan(40);
      for (const url of Object.values(a.image)) expect(url.startsWith(`/assets/coins/${a.id}.svg?size=`), a.id).toBe(true);
    }
  });
});

describe('bitcoin supply from the issuance schedule', () => {
  /** Independent of the module: walks every block, halving the satoshi subsidy with BigInt shifts. */
  function issuedByWalkingBlocks(heights: number[]): Map<number, number> {
    const wanted = [...heights].sort((a, b) => a - b);
    const result = new Map<number, number>();
    let sats = 0n;
    let h = 0;
    for (const target of wanted) {
      for (; h < target; h++) sats += 5_000_000_000n >> BigInt(Math.floor(h / 210_000));
      result.set(target, Number(sats) / 1e8);
    }
    return result;
  }

  // Block 840,000: 2024-04-20 00:09:27 UTC.
  const anchorMs = 1_713_571_767_000;
  const bitcoin = findAsset('bitcoin')!;

  it('matches the known totals at the halvings, exactly', () => {
    expect(bitcoinIssuedBelow(0)).toBe(0);
    expect(bitcoinIssuedBelow(1)).toBe(50);
    expect(bitcoinIssuedBelow(210_000)).toBe(10_500_000);
    expect(bitcoinIssuedBelow(840_000)).toBe(19_687_500);
    // Every subsidy ever: 2,099,999,997,690,000 satoshi (the rounding leaves it under 21M).
    expect(bitcoinIssuedBelow(7_000_000)).toBe(20_999_999.9769);
    const heights = [1, 209_999, 210_000, 210_001, 630_000, 839_999, 840_000, 840_001, 924_816, 1_050_000, 1_260_001];
    const walked = issuedByWalkingBlocks(heights);
    for (const h of heights) expect(bitcoinIssuedBelow(h), `height ${h}`).toBe(walked.get(h));
  });

  it('supplyAt estimates the height from the anchor at 10 minutes per block', () => {
    const tenMinutes = 600_000;
    const cases = [
      { at: anchorMs, tip: 840_000 },
      { at: anchorMs + tenMinutes - 1, tip: 840_000 },
      { at: anchorMs + tenMinutes, tip: 840_001 },
      { at: Date.UTC(2025, 10, 30), tip: 840_000 + Math.floor((Date.UTC(2025, 10, 30) - anchorMs) / tenMinutes) },
      { at: anchorMs + 210_000 * tenMinutes, tip: 1_050_000 },
    ];
    const walked = issuedByWalkingBlocks(cases.map((c) => c.tip + 1));
    for (const { at, tip } of cases) {
      const s = supplyAt(bitcoin, at);
      expect(s.circulating, new Date(at).toISOString()).toBe(walked.get(tip + 1));
      expect(s.total).toBe(s.circulating);
      expect(s.max).toBe(21_000_000);
      expect(s.source).toBe(`computed: issuance schedule at estimated height ${tip}`);
    }
    // At the anchor the tip is block 840,000 itself, the first to pay 3.125 BTC.
    expect(supplyAt(bitcoin, anchorMs).circulating).toBe(19_687_503.125);
  });

  it('never decreases over time and stays under 21 million', () => {
    let previous = 0;
    for (let at = Date.UTC(2008, 0, 1); at < Date.UTC(2160, 0, 1); at += 30 * 86_400_000) {
      const { circulating } = supplyAt(bitcoin, at);
      expect(circulating).toBeGreaterThanOrEqual(previous);
      expect(circulating).toBeLessThan(21_000_000);
      previous = circulating;
    }
    expect(supplyAt(bitcoin, Date.UTC(2008, 0, 1)).circulating).toBe(0);
    expect(previous).toBe(20_999_999.9769);
  });

  it('other assets report the catalog figures', () => {
    const eth = findAsset('ethereum')!;
    const { circulating, total, max, source } = eth.supply;
    expect(supplyAt(eth, Date.now())).toEqual({ circulating, total, max, source });
  });
});

describe('MDS_CATALOG_DIR', () => {
  const dirs: string[] = [];
  function catalogDir(assets: unknown, categories: unknown = rawCategories): string {
    const dir = mkdtempSync(join(tmpdir(), 'mds-catalog-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'assets.json'), typeof assets === 'string' ? assets : JSON.stringify(assets));
    writeFileSync(join(dir, 'categories.json'), JSON.stringify(categories));
    return dir;
  }
  const [btc, eth] = rawAssets as [CatalogAsset, CatalogAsset];

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('is a documented configuration variable', () => {
    expect(loadConfig({ MDS_CATALOG_DIR: '/srv/catalog' }).MDS_CATALOG_DIR).toBe('/srv/catalog');
    expect(loadConfig({}).MDS_CATALOG_DIR).toBeUndefined();
  });

  it('replaces the bundled catalog when the module is imported', async () => {
    const own = { ...eth, id: 'my-token', symbol: 'mine', name: 'My Token', categories: ['defi'] };
    const dir = catalogDir([own, btc], [{ id: 'defi', name: 'DeFi', description: '' }, ...rawCategories.filter((c) => c.id !== 'defi')]);
    vi.stubEnv('MDS_CATALOG_DIR', dir);
    vi.resetModules();
    const catalog = await import('../catalog.ts');
    expect(catalog.catalogAssets.map((a) => a.id)).toEqual(['my-token', 'bitcoin']);
    expect(catalog.findAsset('ethereum')).toBeUndefined();
    expect(catalog.findCategory('defi')?.name).toBe('DeFi');
    // The schedule still applies to bitcoin from an operator's file.
    expect(catalog.supplyAt(catalog.findAsset('bitcoin')!, 1_713_571_767_000).circulating).toBe(19_687_503.125);
  });

  it('a malformed file stops the import with an error naming the file, the entry and the field', async () => {
    const broken = { ...eth, supply: { ...eth.supply, max: 'lots' } };
    const dir = catalogDir([btc, broken]);
    const message = new RegExp(`${join(dir, 'assets.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid catalog file\\n  entry 1 \\("ethereum"\\), field supply\\.max: `);
    expect(() => loadCatalog(dir)).toThrow(CatalogError);
    expect(() => loadCatalog(dir)).toThrow(message);
    vi.stubEnv('MDS_CATALOG_DIR', dir);
    vi.resetModules();
    await expect(import('../catalog.ts')).rejects.toThrow(message);
  });

  it('names the file for unreadable JSON, a missing file, unknown categories and duplicate ids', () => {
    const notJson = catalogDir('[{"id": ');
    expect(() => loadCatalog(notJson)).toThrow(`${join(notJson, 'assets.json')}: not valid JSON`);
    expect(() => loadCatalog(join(notJson, 'missing'))).toThrow(`${join(notJson, 'missing', 'assets.json')}: cannot read`);
    const unknownCategory = catalogDir([{ ...btc, categories: ['layer-1', 'moon'] }]);
    expect(() => loadCatalog(unknownCategory)).toThrow(
      `${join(unknownCategory, 'assets.json')}: entry 0 ("bitcoin"), field categories: "moon" is not in ${join(unknownCategory, 'categories.json')}`,
    );
    const duplicate = catalogDir([btc, eth, btc]);
    expect(() => loadCatalog(duplicate)).toThrow(`${join(duplicate, 'assets.json')}: entry 2, field id: "bitcoin" appears twice`);
    const extraField = catalogDir([{ ...btc, market_cap: 1 }]);
    expect(() => loadCatalog(extraField)).toThrow(/entry 0 \("bitcoin"\), field \(entry\): Unrecognized key: "market_cap"/);
    // `--` is the discovered assets' separator (discovered.ts): a catalog id holding it could be one.
    const reserved = catalogDir([btc, { ...eth, id: 'ether--kraken' }]);
    expect(() => loadCatalog(reserved)).toThrow(`${join(reserved, 'assets.json')}: entry 1 ("ether--kraken"), field id: must not contain "--"`);
  });
});

// The operator's identities file: what it may say, and the errors that name the file and entry.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { CatalogError } from '../catalog.ts';
import { identitiesPath, loadIdentities } from '../identities.ts';

const dir = mkdtempSync(join(tmpdir(), 'mds-identities-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(content: unknown): string {
  const path = join(dir, `identities-${n++}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('loadIdentities', () => {
  test('mappings (scale 1 unless given) and tickers decided apart', () => {
    const path = file({
      map: [
        { venue: 'binance-futures', ticker: '1000PEPE', asset: 'pepe', scale: 1000, note: 'report: agrees, 0.4 %' },
        { venue: 'kraken', ticker: 'FOO', asset: 'foo--gate' },
      ],
      apart: [{ venue: 'okx', ticker: 'FOO' }],
    });
    expect(loadIdentities(path)).toEqual({
      file: path,
      mappings: [
        { venue: 'binance-futures', ticker: '1000PEPE', asset: 'pepe', scale: 1000, note: 'report: agrees, 0.4 %' },
        { venue: 'kraken', ticker: 'FOO', asset: 'foo--gate', scale: 1, note: '' },
      ],
      apart: [{ venue: 'okx', ticker: 'FOO', note: '' }],
    });
    expect(loadIdentities(undefined)).toEqual({ file: undefined, mappings: [], apart: [] });
  });

  test.each([
    [{ map: [{ venue: 'nowhere', ticker: 'FOO', asset: 'pepe' }] }, 'map[0]: venue "nowhere" is not a venue we collect from'],
    [{ map: [{ venue: 'kraken', ticker: 'FOO', asset: 'no-such-coin' }] }, 'map[0]: asset "no-such-coin" is neither a catalog id nor a discovered id'],
    [{ map: [{ venue: 'kraken', ticker: 'FOO', asset: 'pepe' }], apart: [{ venue: 'kraken', ticker: 'FOO' }] }, 'apart[0]: kraken FOO is decided twice'],
    [{ map: [{ venue: 'binance', ticker: 'BTC', asset: 'pepe' }] }, 'map[0]: the catalog already maps binance BTC to bitcoin'],
    [
      { map: [{ venue: 'kraken', ticker: 'FOO', asset: 'foo--gate' }, { venue: 'gate', ticker: 'FOO', asset: 'pepe' }] },
      'map[0]: asset "foo--gate" is itself mapped to another asset in this file',
    ],
    [{ map: [{ venue: 'kraken', ticker: 'FOO', asset: 'pepe', scale: 0 }] }, 'invalid identities file\n  map.0.scale:'],
    [{ map: [{ venue: 'kraken', ticker: 'FOO', asset: 'pepe', price: 1 }] }, 'invalid identities file\n  map.0:'],
    ['{"map": [', 'cannot read as JSON'],
  ])('refuses %j: %s', (content, message) => {
    const path = file(content);
    expect(() => loadIdentities(path)).toThrow(CatalogError);
    expect(() => loadIdentities(path)).toThrow(`${path}: ${message}`);
  });
});

describe('identitiesPath', () => {
  test('MDS_IDENTITIES_FILE, else identities.json in the data directory when it exists, else none', () => {
    expect(identitiesPath({ MDS_IDENTITIES_FILE: '/srv/ids.json', MDS_DATA_DIR: dir })).toBe('/srv/ids.json');
    expect(identitiesPath({ MDS_DATA_DIR: dir })).toBeUndefined();
    writeFileSync(join(dir, 'identities.json'), '{}');
    expect(identitiesPath({ MDS_DATA_DIR: dir })).toBe(join(dir, 'identities.json'));
  });
});

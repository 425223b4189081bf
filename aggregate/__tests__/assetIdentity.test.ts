// The identity rules over hand-made assets: the expected verdicts are worked out here from the prices.
import { describe, expect, test } from 'vitest';
import { identityReport, priceDeviation, samePriceBound, scaledTicker, type IdentityMember } from '../assetIdentity.ts';

const discovered = (id: string, price: number | null): IdentityMember => {
  const [ticker, venue] = id.split('--') as [string, string];
  return { id, kind: 'discovered', venue, ticker, scale: scaledTicker(ticker).scale, price };
};
const catalog = (id: string, ticker: string, price: number | null): IdentityMember => ({ id, kind: 'catalog', venue: null, ticker, scale: 1, price });

describe('scaledTicker', () => {
  test('scale prefixes are read off when letters follow them', () => {
    expect(scaledTicker('1000PEPE')).toEqual({ ticker: 'pepe', scale: 1000 });
    expect(scaledTicker('1000000mog')).toEqual({ ticker: 'mog', scale: 1_000_000 });
    expect(scaledTicker('10000LADYS')).toEqual({ ticker: 'ladys', scale: 10_000 });
    expect(scaledTicker('1MBABYDOGE')).toEqual({ ticker: 'babydoge', scale: 1_000_000 });
  });

  test('anything else is its own ticker at scale 1', () => {
    for (const t of ['PEPE', '1INCH', '1000', '100PEPE', 'A1000B']) expect(scaledTicker(t)).toEqual({ ticker: t.toLowerCase(), scale: 1 });
  });
});

describe('identityReport', () => {
  test('a ticker nobody else has is distinct', () => {
    expect(identityReport([catalog('bitcoin', 'btc', 90_000), discovered('notacoin--binance', 0.25)])).toEqual([
      { id: 'notacoin--binance', venue: 'binance', ticker: 'notacoin', base: { ticker: 'notacoin', scale: 1 }, unitPrice: 0.25, candidates: [], state: 'distinct', decided: false, delistedOn: null },
    ]);
  });

  test('a colliding ticker whose prices disagree beyond the bound is apart; one within it is ambiguous (never merged)', () => {
    // FOO on gate trades at 10, on kraken at 10.3 (3 %: within 5 %), on okx at 0.02 (another asset).
    const rows = identityReport([discovered('foo--gate', 10), discovered('foo--kraken', 10.3), discovered('foo--okx', 0.02)]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get('foo--gate')!.state).toBe('ambiguous');
    expect(byId.get('foo--gate')!.candidates).toEqual([
      { id: 'foo--kraken', unitPrice: 10.3, deviation: 10.3 / 10 - 1, verdict: 'agrees' },
      { id: 'foo--okx', unitPrice: 0.02, deviation: 10 / 0.02 - 1, verdict: 'disagrees' },
    ]);
    expect(byId.get('foo--okx')!.state).toBe('apart');
    expect(byId.get('foo--okx')!.candidates.map((c) => c.verdict)).toEqual(['disagrees', 'disagrees']);
    // Ambiguous first, then apart.
    expect(rows.map((r) => r.id)).toEqual(['foo--gate', 'foo--kraken', 'foo--okx']);
  });

  test('a scaled ticker compares its unit price: 1000PEPE at 1000 times PEPE agrees with the catalog pepe', () => {
    const [row] = identityReport([catalog('pepe', 'pepe', 0.00001), discovered('1000pepe--binance-futures', 0.0101)]);
    expect(row).toMatchObject({ base: { ticker: 'pepe', scale: 1000 }, state: 'ambiguous' });
    expect(row!.unitPrice).toBeCloseTo(0.0000101, 15);
    expect(row!.candidates).toEqual([{ id: 'pepe', unitPrice: 0.00001, deviation: priceDeviation(0.0101 / 1000, 0.00001), verdict: 'agrees' }]);
    // 1000SATS named its own asset: a unit price 1000 times off the catalog's SATS is apart.
    const [sats] = identityReport([catalog('sats-ordinals', 'sats', 3e-7), discovered('1000sats--binance', 3e-7)]);
    expect(sats!.state).toBe('apart');
  });

  test('just within the bound agrees, just beyond it is apart; and an asset without a price cannot be told apart: ambiguous', () => {
    const atBound = identityReport([discovered('bar--gate', 100), discovered('bar--kraken', 100 * (1 + samePriceBound) * 0.999)]);
    expect(atBound.every((r) => r.state === 'ambiguous')).toBe(true);
    const beyond = identityReport([discovered('bar--gate', 100), discovered('bar--kraken', 100 * (1 + samePriceBound) * 1.001)]);
    expect(beyond.every((r) => r.state === 'apart')).toBe(true);
    const unpriced = identityReport([discovered('baz--gate', null), discovered('baz--kraken', 5)]);
    expect(unpriced.map((r) => [r.state, r.candidates[0]!.verdict])).toEqual([
      ['ambiguous', 'unpriced'],
      ['ambiguous', 'unpriced'],
    ]);
  });

  test("the operator's decision that a ticker is its own asset makes it apart, whatever the prices say", () => {
    const rows = identityReport([{ ...discovered('qux--gate', 10), decidedApart: true }, discovered('qux--kraken', 10.1)]);
    expect(rows.map((r) => [r.id, r.state, r.decided])).toEqual([
      ['qux--kraken', 'ambiguous', false],
      ['qux--gate', 'apart', true],
    ]);
  });
});

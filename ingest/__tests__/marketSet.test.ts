// The market set and re-listing, without a venue: listings handed in, the timer driven by vitest's
// fake clock. The catalog's venue table (infra/catalog/venue-assets.json) maps KuCoin's BTC, ETH, SOL
// and XRP; NOTACOIN is in no table.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { logResolved, MarketSet, type MarketChange } from '../marketSet.ts';
import { toLevels, toTradeEvent } from '../normalize.ts';
import { MarketsRefresh } from '../marketsRefresh.ts';
import type { MarketListing } from '../venue.ts';

const kucoin = { id: 'kucoin', quotes: ['USDT'] };
const listing = (base: string, quote = 'USDT', contractSize = '1'): MarketListing => ({ symbol: `${base}-${quote}`, base, quote, contractSize });
const symbols = (set: { markets: readonly { symbol: string }[] }) => set.markets.map((m) => m.symbol);

/** A logger whose lines are kept as parsed objects. */
function capturedLog(level = 'debug') {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { log, lines };
}

describe('MarketSet', () => {
  test('the first listing: followed quotes and catalogued bases are markets with their asset, in listing order; uncatalogued ones unmapped', () => {
    const set = new MarketSet(kucoin);
    const change = set.apply([listing('SOL'), listing('BTC'), listing('BTC', 'EUR'), listing('NOTACOIN'), listing('ETH')]);
    expect(symbols(set)).toEqual(['SOL-USDT', 'BTC-USDT', 'ETH-USDT']);
    expect(set.markets.map((m) => m.asset)).toEqual(['solana', 'bitcoin', 'ethereum']);
    expect(change.added.map((m) => m.symbol)).toEqual(['SOL-USDT', 'BTC-USDT', 'ETH-USDT']);
    expect(change.removed).toEqual([]);
    expect(set.unmapped).toEqual(['NOTACOIN-USDT']);
    expect(set.get('BTC-USDT')).toMatchObject({ base: 'BTC', asset: 'bitcoin' });
    expect([set.has('BTC-EUR'), set.has('NOTACOIN-USDT'), set.get('BTC-EUR')]).toEqual([false, false, undefined]);
  });

  test('`assets` keeps only those assets; the others are neither markets nor unmapped', () => {
    const set = new MarketSet(kucoin, { assets: new Set(['ethereum']) });
    set.apply([listing('BTC'), listing('ETH'), listing('NOTACOIN')]);
    expect(symbols(set)).toEqual(['ETH-USDT']);
    expect(set.unmapped).toEqual(['NOTACOIN-USDT']);
  });

  test('a later listing: new markets come after the kept ones, delisted ones go; a kept market keeps its first listing', () => {
    const set = new MarketSet(kucoin);
    set.apply([listing('BTC'), listing('ETH'), listing('NOTACOIN')]);
    const first = set.get('BTC-USDT');
    const change = set.apply([listing('XRP'), listing('BTC', 'USDT', '2'), listing('SOL')]);
    expect(change.added.map((m) => m.symbol)).toEqual(['XRP-USDT', 'SOL-USDT']);
    expect(change.removed.map((m) => m.symbol)).toEqual(['ETH-USDT']);
    expect(symbols(set)).toEqual(['BTC-USDT', 'XRP-USDT', 'SOL-USDT']);
    expect(set.get('BTC-USDT')).toBe(first);
    expect(set.get('BTC-USDT')!.contractSize).toBe('1');
    expect(set.has('ETH-USDT')).toBe(false);
    // Unmapped markets follow the latest listing.
    expect(set.unmapped).toEqual([]);
  });

  test('a listing that changes nothing changes nothing; a market delisted and listed again is added again', () => {
    const set = new MarketSet(kucoin);
    set.apply([listing('BTC'), listing('ETH')]);
    const before = set.markets;
    expect(set.apply([listing('ETH'), listing('BTC')])).toEqual({ added: [], removed: [] });
    expect(set.markets).toBe(before);
    expect(set.apply([listing('BTC')]).removed.map((m) => m.symbol)).toEqual(['ETH-USDT']);
    expect(set.apply([listing('BTC'), listing('ETH')]).added.map((m) => m.symbol)).toEqual(['ETH-USDT']);
    expect(symbols(set)).toEqual(['BTC-USDT', 'ETH-USDT']);
  });

  test('discovering: an unmapped base is collected as the discovered asset of this venue and ticker; mapped bases keep their catalog id', () => {
    const set = new MarketSet(kucoin, { discover: true });
    set.apply([listing('BTC'), listing('NOTACOIN'), listing('1000PEPE'), listing('NOTACOIN', 'EUR')]);
    expect(symbols(set)).toEqual(['BTC-USDT', 'NOTACOIN-USDT', '1000PEPE-USDT']);
    expect(set.markets.map((m) => m.asset)).toEqual(['bitcoin', 'notacoin--kucoin', '1000pepe--kucoin']);
    expect(set.unmapped).toEqual(['1000PEPE-USDT', 'NOTACOIN-USDT']);
    // The same ticker on another venue is another asset: ids never merge two venues' tickers.
    const gate = new MarketSet({ id: 'gate', quotes: ['USDT'] }, { discover: true });
    gate.apply([{ symbol: 'NOTACOIN_USDT', base: 'NOTACOIN', quote: 'USDT', contractSize: '1' }]);
    expect(gate.markets.map((m) => m.asset)).toEqual(['notacoin--gate']);
  });

  test("discovering with `assets` chosen: the operator's choice wins, nothing is discovered", () => {
    const set = new MarketSet(kucoin, { assets: new Set(['bitcoin']), discover: true });
    set.apply([listing('BTC'), listing('ETH'), listing('NOTACOIN')]);
    expect(symbols(set)).toEqual(['BTC-USDT']);
  });

  test("the operator's identities decide a ticker the catalog does not map: a scaled one is priced and sized in units of the asset", () => {
    const decisions = new Map([['1000PEPE', { venue: 'kucoin', ticker: '1000PEPE', asset: 'pepe', scale: 1000, note: '' }], ['OLDFOO', { venue: 'kucoin', ticker: 'OLDFOO', asset: 'foo--gate', scale: 1, note: '' }]]);
    const set = new MarketSet(kucoin, { discover: false, identities: (_venue, ticker) => decisions.get(ticker) });
    set.apply([listing('BTC'), listing('1000PEPE'), listing('OLDFOO'), listing('NOTACOIN')]);
    expect(set.markets.map((m) => [m.symbol, m.asset, m.unitScale])).toEqual([
      ['BTC-USDT', 'bitcoin', undefined],
      ['1000PEPE-USDT', 'pepe', 1000],
      ['OLDFOO-USDT', 'foo--gate', undefined],
    ]);
    // Decided tickers are not unmapped; NOTACOIN, decided by nobody and not discovered, is.
    expect(set.unmapped).toEqual(['NOTACOIN-USDT']);
    const pepe = set.get('1000PEPE-USDT')!;
    const event = toTradeEvent('kucoin', pepe, { kind: 'trade', symbol: '1000PEPE-USDT', tradeId: '7', price: '0.0125', quantity: '40', side: 'buy', ts: 1 }, 2);
    expect(event).toMatchObject({ asset: 'pepe', price: 0.0125 / 1000, quantity: 40_000 });
    expect(toLevels([['0.0125', '40']], pepe)).toEqual([[0.0125 / 1000, 40_000]]);
  });

  test('logResolved when discovering: the unmapped markets are said to be collected', () => {
    const { log, lines } = capturedLog('info');
    const set = new MarketSet(kucoin, { discover: true });
    set.apply([listing('BTC'), listing('NOTACOIN')]);
    logResolved(log, set);
    expect(lines.map((l) => l.msg)).toEqual(['markets whose base asset is not in the catalog: collected as discovered assets', 'markets resolved']);
    expect(lines[0]).toMatchObject({ count: 1, sample: ['NOTACOIN-USDT'] });
    expect(lines[1]).toMatchObject({ markets: 2 });
  });

  test('logResolved: the unmapped markets (the first 50, with their count) when there are any, then the markets resolved', () => {
    const { log, lines } = capturedLog('info');
    const set = new MarketSet(kucoin);
    set.apply([listing('BTC'), ...Array.from({ length: 60 }, (_, i) => listing(`NOTACOIN${String(i).padStart(2, '0')}`))]);
    logResolved(log, set);
    expect(lines.map((l) => l.msg)).toEqual(['markets whose base asset is not in the catalog: not collected', 'markets resolved']);
    expect(lines[0]).toMatchObject({ count: 60 });
    expect(lines[0]!.unmapped).toEqual(set.unmapped.slice(0, 50));
    expect(lines[1]).toMatchObject({ markets: 1 });
    const quiet = capturedLog('info');
    const mapped = new MarketSet(kucoin);
    mapped.apply([listing('BTC')]);
    logResolved(quiet.log, mapped);
    expect(quiet.lines.map((l) => l.msg)).toEqual(['markets resolved']);
  });
});

describe('MarketsRefresh', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  /** A refresh over a set first listed with BTC and ETH; `listings` answers each listing in turn (an Error is a failed one). */
  function refreshing(listings: (MarketListing[] | Error | Promise<MarketListing[]>)[], started: Promise<void> = Promise.resolve()) {
    const markets = new MarketSet(kucoin);
    markets.apply([listing('BTC'), listing('ETH')]);
    const changes: MarketChange[] = [];
    let asked = 0;
    let stopped = false;
    const { log, lines } = capturedLog();
    const refresh = new MarketsRefresh({
      everyMs: 1_000,
      started,
      list: async () => {
        const answer = listings[Math.min(asked++, listings.length - 1)]!;
        if (answer instanceof Error) throw answer;
        return answer;
      },
      markets,
      onChange: async (change) => void changes.push(change),
      stopped: () => stopped,
      log,
    });
    return { refresh, markets, changes, lines, asked: () => asked, stop: () => (stopped = true) };
  }

  test('lists again every period and applies what changed; the change is logged after onChange ran', async () => {
    const r = refreshing([[listing('BTC'), listing('ETH')], [listing('BTC'), listing('SOL')]]);
    await vi.advanceTimersByTimeAsync(999);
    expect(r.asked()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(r.asked()).toBe(1);
    expect(r.changes).toEqual([]);
    expect(r.lines.at(-1)).toMatchObject({ msg: 'markets unchanged', markets: 2 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(r.asked()).toBe(2);
    expect(r.changes.map((c) => [c.added.map((m) => m.symbol), c.removed.map((m) => m.symbol)])).toEqual([[['SOL-USDT'], ['ETH-USDT']]]);
    expect(symbols(r.markets)).toEqual(['BTC-USDT', 'SOL-USDT']);
    expect(r.lines.at(-1)).toMatchObject({ msg: 'markets changed', added: ['SOL-USDT'], removed: ['ETH-USDT'], markets: 2 });
    await r.refresh.stop();
  });

  test('a failed listing keeps the current markets, is logged, and the next period tries again', async () => {
    const r = refreshing([new Error('HTTP 503'), [listing('BTC')]]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(symbols(r.markets)).toEqual(['BTC-USDT', 'ETH-USDT']);
    expect(r.lines.at(-1)).toMatchObject({ msg: 'market refresh failed: keeping the current markets', err: 'HTTP 503', level: 40 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(symbols(r.markets)).toEqual(['BTC-USDT']);
    await r.refresh.stop();
  });

  test('one refresh at a time: a listing slower than the period is not asked again meanwhile', async () => {
    let answer!: (l: MarketListing[]) => void;
    const r = refreshing([new Promise<MarketListing[]>((resolve) => (answer = resolve)), [listing('BTC')]]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(r.asked()).toBe(1);
    answer([listing('BTC'), listing('XRP')]);
    await vi.advanceTimersByTimeAsync(0);
    expect(symbols(r.markets)).toEqual(['BTC-USDT', 'XRP-USDT']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(r.asked()).toBe(2);
    await r.refresh.stop();
  });

  test('nothing is listed before the first listing is done', async () => {
    let begin!: () => void;
    const r = refreshing([[listing('BTC')]], new Promise<void>((resolve) => (begin = resolve)));
    await vi.advanceTimersByTimeAsync(3_000);
    expect(r.asked()).toBe(0);
    begin();
    await vi.advanceTimersByTimeAsync(0);
    expect(r.asked()).toBe(1);
    await r.refresh.stop();
  });

  test('stop: no listing after it, the one under way awaited; a listing answered after the collector stopped changes nothing', async () => {
    let answer!: (l: MarketListing[]) => void;
    const r = refreshing([new Promise<MarketListing[]>((resolve) => (answer = resolve))]);
    await vi.advanceTimersByTimeAsync(1_000);
    r.stop();
    let stopped = false;
    const stopping = r.refresh.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    answer([listing('SOL')]);
    await stopping;
    expect(symbols(r.markets)).toEqual(['BTC-USDT', 'ETH-USDT']);
    expect(r.changes).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(r.asked()).toBe(1);
  });
});

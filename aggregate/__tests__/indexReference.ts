import type { IndexParams } from '../indexPrice.ts';

/**
 * The index price recomputed for tests straight from raw trades, second by second, in plain
 * TypeScript: no candles, no per-second tables, no code shared with the engine (only its
 * parameter values). Every test that checks an index price compares the engine against this.
 */

export interface RawTrade {
  venue: string;
  market: string;
  asset: string;
  quote: string;
  trade_id: string;
  ts: number;
  price: number;
  quantity: number;
}

export interface ReferenceTick {
  second: number;
  price: number;
  status: 'ok' | 'single_venue' | 'fail_closed';
  /** venue:market, sorted. */
  constituents: string[];
  excluded: Record<string, string>;
  volume: number;
  volumeUsd: number;
  tradeCount: number;
  lastTradeAt: number;
  /** Every candidate market with its verdict: for the last second asked only (empty before it). */
  markets: { key: string; priceUsd: number | null; volume24hUsd: number; weight: number; reason: string | null }[];
}

export interface ReferenceOptions {
  params: IndexParams;
  /** USD per unit of a quote at a second; by default USD, USDT and USDC are 1 and nothing else has a rate. */
  usdPer?: (quote: string, second: number) => number | undefined;
  /** Venues whose markets are perpetuals. */
  perpetualVenues?: ReadonlySet<string>;
  /** venue:market -> the seconds in which its book counts as crossed. */
  crossed?: (key: string, second: number) => boolean;
  /** The collectors' connection statuses (unix ms); a market is connected until one says otherwise. */
  statuses?: readonly { key: string; ts: number; connected: boolean }[];
}

/** Whether the last status of `key` published before the end of second `s` says disconnected. */
function isDisconnected(statuses: ReferenceOptions['statuses'], key: string, s: number): boolean {
  let connected = true;
  let latest = -Infinity;
  for (const st of statuses ?? []) {
    if (st.key === key && st.ts < (s + 1) * 1000 && st.ts >= latest) {
      latest = st.ts;
      connected = st.connected;
    }
  }
  return !connected;
}

const parUsd = (quote: string) => (quote === 'USD' || quote === 'USDT' || quote === 'USDC' ? 1 : undefined);

/** Later trade first by time, then by trade id (as the store orders them). */
const later = (a: RawTrade, b: RawTrade) => a.ts > b.ts || (a.ts === b.ts && a.trade_id > b.trade_id);

/** The reference ticks of `asset` for the seconds fromS..toS (only seconds with a published price). */
export function referenceTicks(trades: readonly RawTrade[], asset: string, fromS: number, toS: number, options: ReferenceOptions): ReferenceTick[] {
  const p = options.params;
  const usdPer = options.usdPer ?? parUsd;
  const byMarket = new Map<string, RawTrade[]>();
  for (const t of trades) {
    if (t.asset !== asset) continue;
    const key = `${t.venue}:${t.market}`;
    const list = byMarket.get(key) ?? [];
    list.push(t);
    byMarket.set(key, list);
  }
  // Each market's trades in (time, id) order with running sums, so a window is two binary searches.
  const markets = [...byMarket.keys()].sort().map((key) => {
    const list = byMarket.get(key)!.sort((a, b) => (later(a, b) ? 1 : later(b, a) ? -1 : 0));
    const notional = [0];
    for (const t of list) notional.push(notional.at(-1)! + t.price * t.quantity);
    /** Index of the first trade at or after `ms`. */
    const firstAt = (ms: number) => {
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (list[mid]!.ts < ms) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    return { key, list, notional, firstAt };
  });
  const out: ReferenceTick[] = [];
  let prev: ReferenceTick | undefined;

  for (let s = fromS; s <= toS; s++) {
    const end = (s + 1) * 1000;
    const minuteStartMs = (s - (s % 60)) * 1000;
    const windowStart = minuteStartMs - p.volumeWindowMinutes * 60_000;
    const intervalStart = minuteStartMs - p.intervalWindowMinutes * 60_000;

    type Row = { key: string; venue: string; price: number | null; volume: number; lastAt: number; meanInterval: number; perp: boolean; crossed: boolean; disconnected: boolean; reason: string | null; second: RawTrade[]; rate: number | undefined };
    const rows: Row[] = [];
    for (const { key, list, notional: sums, firstAt } of markets) {
      const endIndex = firstAt(end);
      const notional = sums[endIndex]! - sums[firstAt(windowStart)]!;
      if (!(notional > 0)) continue;
      const last = list[endIndex - 1]!;
      const n = firstAt(minuteStartMs) - firstAt(intervalStart);
      const rate = usdPer(last.quote, s);
      rows.push({
        key,
        venue: last.venue,
        price: rate === undefined ? null : last.price * rate,
        volume: rate === undefined ? 0 : notional * rate,
        lastAt: last.ts,
        meanInterval: n > 0 ? (p.intervalWindowMinutes * 60_000) / n : Infinity,
        perp: options.perpetualVenues?.has(last.venue) ?? false,
        crossed: options.crossed?.(key, s) ?? false,
        disconnected: isDisconnected(options.statuses, key, s),
        reason: null,
        second: list.slice(firstAt(s * 1000), endIndex),
        rate,
      });
    }
    if (rows.length === 0) {
      prev = undefined;
      continue;
    }

    for (const r of rows) {
      if (r.perp && !p.includePerpetuals) r.reason = 'perpetual';
      else if (r.price === null) r.reason = 'no_usd_rate';
    }
    const withRate = rows.filter((r) => r.reason === null);
    const total = withRate.reduce((sum, r) => sum + r.volume, 0);
    for (const r of withRate) {
      const age = end - r.lastAt;
      const inactive = age > p.staleMinMs && (age > p.staleMaxMs || age > p.staleIntervals * r.meanInterval);
      if (r.disconnected) r.reason = 'disconnected';
      else if (inactive) r.reason = 'stale';
      else if (r.crossed) r.reason = 'crossed_book';
      else if (total > 0 && r.volume / total < p.minShare) r.reason = 'low_share';
    }
    const eligible = new Set(withRate.filter((r) => r.reason !== 'low_share').map((r) => r.venue));
    const healthySoFar = withRate.filter((r) => r.reason === null);
    if (healthySoFar.length > 0) {
      const prices = healthySoFar.map((r) => r.price!).sort((a, b) => a - b);
      const half = Math.floor(prices.length / 2);
      const med = prices.length % 2 ? prices[half]! : (prices[half - 1]! + prices[half]!) / 2;
      for (const r of healthySoFar) {
        const dev = Math.abs(r.price! / med - 1);
        const wasOut = prev?.excluded[r.key] === 'outlier';
        if (wasOut ? dev >= p.outlierThreshold * p.outlierReadmitFraction : dev > p.outlierThreshold) r.reason = 'outlier';
      }
    }
    const inside = withRate.filter((r) => r.reason === null);
    const healthy = new Set(inside.map((r) => r.venue));
    const weightTotal = inside.reduce((sum, r) => sum + r.volume, 0);
    const open = eligible.size <= 1 ? healthy.size === 1 : healthy.size >= Math.min(p.minHealthyVenues, eligible.size);
    const excluded = Object.fromEntries(rows.filter((r) => r.reason !== null).map((r) => [r.key, r.reason!]));

    let tick: ReferenceTick | undefined;
    if (open && weightTotal > 0) {
      const secondTrades = inside.flatMap((r) => r.second.map((t) => ({ t, rate: r.rate! })));
      tick = {
        second: s,
        price: inside.reduce((sum, r) => sum + r.volume * r.price!, 0) / weightTotal,
        status: eligible.size <= 1 ? 'single_venue' : 'ok',
        constituents: inside.map((r) => r.key).sort(),
        excluded,
        volume: secondTrades.reduce((sum, x) => sum + x.t.quantity, 0),
        volumeUsd: secondTrades.reduce((sum, x) => sum + x.t.price * x.t.quantity * x.rate, 0),
        tradeCount: secondTrades.length,
        lastTradeAt: Math.max(...inside.map((r) => r.lastAt)),
        markets: s < toS ? [] : rows.map((r) => ({ key: r.key, priceUsd: r.price, volume24hUsd: r.volume, weight: r.reason === null ? r.volume / weightTotal : 0, reason: r.reason })),
      };
    } else if (prev) {
      tick = {
        second: s,
        price: prev.price,
        status: 'fail_closed',
        constituents: [],
        excluded,
        volume: 0,
        volumeUsd: 0,
        tradeCount: 0,
        lastTradeAt: prev.lastTradeAt,
        markets: s < toS ? [] : rows.map((r) => ({ key: r.key, priceUsd: r.price, volume24hUsd: r.volume, weight: 0, reason: r.reason })),
      };
    }
    if (tick) out.push(tick);
    prev = tick;
  }
  return out;
}

/**
 * The seconds the engine stores a row for (index_ticks, index_price_history): those in which a
 * constituent traded, or whose price, status, constituents, exclusions or last trade differ from
 * the second before (or the second before had no price). Readers take the latest row at or
 * before a second.
 */
export function storedRows(ticks: readonly ReferenceTick[]): ReferenceTick[] {
  const content = (t: ReferenceTick) => JSON.stringify([t.price, t.status, t.constituents, Object.entries(t.excluded).sort(), t.lastTradeAt]);
  return ticks.filter((t, i) => {
    const before = ticks[i - 1];
    return t.tradeCount > 0 || before?.second !== t.second - 1 || content(before) !== content(t);
  });
}

import { z } from 'zod';
import type { Channel } from '../infra/events.ts';
import type { ExclusionReason } from './indexPrice.ts';

/**
 * Exchange score, 0-10, from what we measure of a venue (aggregate/METHODOLOGY.md, "Market
 * quality and exchange score"). After CoinGecko's Trust Score and methodology.md section 3, without
 * the regulatory/transparency pillar: we measure nothing of it, so the other pillars' points are
 * scaled up to fill the 10.
 */
export const exchangeScoreParamsSchema = z
  .object({
    /** Maximum points of each pillar; they sum to 10. */
    points: z
      .object({
        liquidity: z.number().nonnegative().default(5),
        dataQuality: z.number().nonnegative().default(2.5),
        scale: z.number().nonnegative().default(1.25),
        apiCoverage: z.number().nonnegative().default(1.25),
      })
      .prefault({}),
    /** Weights inside data quality; a part that does not apply drops out and the others share its weight. */
    dataQuality: z
      .object({
        uptime: z.number().nonnegative().default(0.5),
        bookFreshness: z.number().nonnegative().default(0.25),
        cleanMarkets: z.number().nonnegative().default(0.25),
      })
      .prefault({}),
    /** Scale: 0 at or below this 24 h USD volume... */
    scaleFloorUsd: z.number().positive().default(1e6),
    /** ...full points at or above this one, log10-linear in between. */
    scaleCeilingUsd: z.number().positive().default(1e10),
    /** Credit of a liquidation feed that publishes a sample, not every liquidation (full feed: 1). */
    sampledLiquidationCredit: z.number().min(0).max(1).default(0.5),
  })
  .refine((p) => p.scaleCeilingUsd > p.scaleFloorUsd, 'scaleCeilingUsd must be above scaleFloorUsd');
export type ExchangeScoreParams = z.infer<typeof exchangeScoreParamsSchema>;
export const defaultExchangeScoreParams: ExchangeScoreParams = exchangeScoreParamsSchema.parse({});

/** Index exclusion reasons that say something is wrong with the venue's data (not size or policy); a dropped socket is one. */
export const dataQualityExclusions: readonly ExclusionReason[] = ['disconnected', 'stale', 'crossed_book', 'outlier'];
/** Reasons the index decides before it looks at the data: such a market was never judged on it. */
export const unjudgedExclusions: readonly ExclusionReason[] = ['perpetual', 'no_usd_rate'];

/** What we measured of one venue over the score's window. */
export interface ExchangeScoreInputs {
  contract: 'spot' | 'perpetual';
  /** Channels our collector of the venue reads; empty when we have no collector for it. */
  channels: readonly Channel[];
  /** Its liquidation feed publishes a sample only (e.g. Binance: one per symbol and second). */
  liquidationsSampled: boolean;
  volume24hUsd: number;
  /** The venue's USD-valued markets that traded in the window: USD volume, and the liquidity score of a fresh book (null: none). */
  markets: readonly { volume24hUsd: number; liquidityScore: number | null }[];
  /** Complete minutes of the window, and those in which any market of the venue traded. */
  windowMinutes: number;
  tradedMinutes: number;
  /** Markets the index judged recently, and those of them excluded for a data-quality reason. */
  judgedMarkets: number;
  flaggedMarkets: number;
}

export interface ExchangeScore {
  score: number;
  breakdown: { liquidity: number; dataQuality: number; scale: number; apiCoverage: number };
  /** The measured parts behind the points. */
  inputs: {
    /** Volume-weighted mean liquidity score of the markets with a fresh book; null when none has one. */
    liquidityScore: number | null;
    /** Share of the window's minutes with a trade on the venue. */
    uptime: number;
    /** Share of the USD-valued markets with a fresh book; null when the venue has no book channel. */
    bookFreshness: number | null;
    /** Share of the judged markets excluded from the index for stale, crossed_book or outlier; null when none was judged. */
    flaggedShare: number | null;
    /** Channels the venue offers, as credited (a sampled liquidation feed counts sampledLiquidationCredit). */
    channelCoverage: number;
  };
}

/** Mean of the parts that apply (value not null), each with its weight; 0 when none applies. */
function weightedMean(parts: readonly [value: number | null, weight: number][]): number {
  let sum = 0;
  let weights = 0;
  for (const [value, weight] of parts) {
    if (value === null) continue;
    sum += value * weight;
    weights += weight;
  }
  return weights > 0 ? sum / weights : 0;
}

/**
 * The score of one venue; null when it did not trade in any complete minute of the window: then
 * nothing about it is measured and no number is better than a made-up one.
 */
export function exchangeScore(m: ExchangeScoreInputs, params: ExchangeScoreParams = defaultExchangeScoreParams): ExchangeScore | null {
  if (m.windowMinutes <= 0 || m.tradedMinutes <= 0) return null;

  const booked = m.markets.filter((x) => x.liquidityScore !== null);
  const bookedVolume = booked.reduce((s, x) => s + x.volume24hUsd, 0);
  const liquidityScore = bookedVolume > 0 ? booked.reduce((s, x) => s + x.volume24hUsd * x.liquidityScore!, 0) / bookedVolume : null;

  const uptime = Math.min(1, m.tradedMinutes / m.windowMinutes);
  // Books are measured on USD-valued markets only: a venue without one has nothing to be fresh.
  const bookFreshness = m.channels.includes('books') && m.markets.length > 0 ? booked.length / m.markets.length : null;
  const flaggedShare = m.judgedMarkets > 0 ? m.flaggedMarkets / m.judgedMarkets : null;
  const dq = params.dataQuality;
  const dataQuality = weightedMean([
    [uptime, dq.uptime],
    [bookFreshness, dq.bookFreshness],
    [flaggedShare === null ? null : 1 - flaggedShare, dq.cleanMarkets],
  ]);

  const low = Math.log10(params.scaleFloorUsd);
  const high = Math.log10(params.scaleCeilingUsd);
  const scale = m.volume24hUsd > 0 ? Math.min(1, Math.max(0, (Math.log10(m.volume24hUsd) - low) / (high - low))) : 0;

  // Liquidations exist only where positions do: a spot venue is judged on trades and books.
  const applicable = m.contract === 'perpetual' ? 3 : 2;
  const liquidationCredit = m.contract === 'perpetual' && m.channels.includes('liquidations') ? (m.liquidationsSampled ? params.sampledLiquidationCredit : 1) : 0;
  const channelCoverage = (Number(m.channels.includes('trades')) + Number(m.channels.includes('books')) + liquidationCredit) / applicable;

  const p = params.points;
  const breakdown = {
    liquidity: (p.liquidity * (liquidityScore ?? 0)) / 1000,
    dataQuality: p.dataQuality * dataQuality,
    scale: p.scale * scale,
    apiCoverage: p.apiCoverage * channelCoverage,
  };
  return {
    score: breakdown.liquidity + breakdown.dataQuality + breakdown.scale + breakdown.apiCoverage,
    breakdown,
    inputs: { liquidityScore, uptime, bookFreshness, flaggedShare, channelCoverage },
  };
}

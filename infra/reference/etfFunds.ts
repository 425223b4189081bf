import { z } from 'zod';
import fundsJson from './etf-funds.json' with { type: 'json' };

/** The underlyings whose US spot ETFs we follow, and the catalog asset each one is. */
export const etfAssets = [
  { id: 'btc', assetId: 'bitcoin', name: 'Bitcoin' },
  { id: 'eth', assetId: 'ethereum', name: 'Ethereum' },
  { id: 'sol', assetId: 'solana', name: 'Solana' },
] as const;
export const etfAssetId = z.enum(['btc', 'eth', 'sol']);
export type EtfAssetId = z.infer<typeof etfAssetId>;

/** A calendar date written YYYY-MM-DD (rejects 2025-02-30, which Date would roll over). */
export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date written YYYY-MM-DD')
  .refine((s) => {
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s);
  }, 'is not a calendar date');

/**
 * One fund of `etf-funds.json`. Issuers add and rename funds, so the list is data, not code
 * (methodology §7.3); `evidence` records where each fact comes from and how sure it is.
 */
export const etfFund = z.object({
  ticker: z.string().regex(/^[A-Z]{1,5}$/, 'must be an upper-case exchange ticker'),
  asset: etfAssetId,
  issuer: z.string().min(1),
  name: z.string().min(1),
  /** First US trading day: the importer refuses flows dated before it. */
  launchDate: isoDate,
  /** What a user should know about the fund (a converted trust, not a pure spot fund); null when nothing. */
  note: z.string().min(1).nullable(),
  evidence: z.string().min(1),
});
export type EtfFund = z.infer<typeof etfFund>;

const etfFundList = z.array(etfFund).superRefine((funds, ctx) => {
  const seen = new Set<string>();
  for (const [i, f] of funds.entries()) {
    if (seen.has(f.ticker)) ctx.addIssue({ code: 'custom', path: [i, 'ticker'], message: `ticker ${f.ticker} is listed twice` });
    seen.add(f.ticker);
  }
});

/** Every fund, in the order of the file (trackers' column order). */
export const etfFunds: readonly EtfFund[] = etfFundList.parse(fundsJson);

/** The funds of one underlying, in file order. */
export function etfFundsOf(asset: EtfAssetId): EtfFund[] {
  return etfFunds.filter((f) => f.asset === asset);
}

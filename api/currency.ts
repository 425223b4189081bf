import { z } from 'zod';

/** Quote currencies served. Only usd until measured FX rates exist; other codes are refused, never served unconverted. */
export const servedCurrencies = ['usd'] as const;

/** The `vs` query parameter shared by the coin endpoints. */
export const vsParam = z
  .enum(servedCurrencies, { error: `must be one of ${servedCurrencies.join(', ')} (other currencies are not served yet)` })
  .default('usd')
  .describe('quote currency');

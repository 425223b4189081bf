import { z } from 'zod';
import { ApiError } from './errors.ts';

// The `from`/`to` query parameters of the history endpoints (ohlc, chart): parsing and the checks
// that involve both of them.

const dayMs = 86_400_000;
/** Latest time a ClickHouse DateTime holds (2106-02-07), the far bound of every range. */
export const latestStoredTime = 4_294_967_295_000;

/** A time: unix ms (digits only), or an ISO 8601 date (midnight UTC) or date-time (UTC unless it carries an offset). */
export function timeParam(description: string) {
  return z
    .string()
    .transform((s, ctx) => {
      const ms = /^\d{1,15}$/.test(s) ? Number(s) : isoTime(s);
      if (ms === undefined || ms > latestStoredTime) {
        ctx.addIssue({ code: 'custom', message: 'must be unix ms or an ISO 8601 date or date-time (e.g. 1767225600000, 2026-01-01, 2026-01-01T00:00:00Z)' });
        return z.NEVER;
      }
      return ms;
    })
    .optional()
    .describe(description);
}

const isoDate = /^\d{4}-\d\d-\d\d$/;
const isoDateTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:\d\d)$/;

/** Unix ms of an ISO 8601 date or date-time; undefined for anything else (Date.parse alone accepts too much). */
function isoTime(s: string): number | undefined {
  if (!isoDate.test(s) && !isoDateTime.test(s)) return undefined;
  const ms = Date.parse(isoDate.test(s) ? `${s}T00:00:00Z` : s);
  return Number.isNaN(ms) || ms < 0 ? undefined : ms;
}

/** `from` before `to`, at most `maxSpanMs` apart; a 400 naming the limit otherwise. */
export function checkRange(from: number, to: number, maxSpanMs: number, limitOf: string): void {
  if (from >= to) throw new ApiError(400, 'bad_request', `invalid parameter from: must be before to (from=${from}, to=${to}, unix ms)`);
  if (to - from > maxSpanMs) {
    throw new ApiError(400, 'bad_request', `invalid parameter to: the range spans more than ${maxSpanMs / dayMs} days, the longest ${limitOf}; ask for several ranges`);
  }
}

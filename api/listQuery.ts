import { z } from 'zod';

const integer = () => z.coerce.number({ error: 'must be an integer' }).int('must be an integer');

/** limit, page and offset of a paginated list (spec 4.17); extend it with the endpoint's other parameters. */
export function paginationQuery(maxLimit: number, defaultLimit: number) {
  return z.object({
    limit: integer()
      .min(1, `must be 1 to ${maxLimit}`)
      .max(maxLimit, `must be 1 to ${maxLimit}`)
      .default(defaultLimit)
      .describe(`rows per page, 1 to ${maxLimit}`),
    page: integer().min(1, 'must be 1 or more').default(1).describe('1-based; ignored when offset is set'),
    offset: integer().min(0, 'must be 0 or more').optional().describe('rows to skip; wins over page'),
  });
}

/** The rows a paginated request asks for (spec 4.17): offset wins over page; the page echoed is the one the offset falls on. */
export function pageOf(query: { limit: number; page: number; offset?: number | undefined }): { limit: number; page: number; offset: number } {
  const { limit, page, offset: given } = query;
  if (given === undefined) return { limit, page, offset: (page - 1) * limit };
  return { limit, page: Math.floor(given / limit) + 1, offset: given };
}

/** A comma-separated list of ids (lowercase slugs); the endpoint decides what unknown ids do. */
export function idListParam(description: string, maxIds = 250) {
  return z
    .string({ error: 'must be one comma-separated list of ids' })
    .transform((s) => (s === '' ? [] : s.split(',').map((id) => id.trim())))
    .pipe(
      z
        .array(z.string().regex(/^[a-z0-9-]{1,100}$/, 'each id must be a lowercase slug (a-z, 0-9, -)'))
        .min(1, 'list at least one id')
        .max(maxIds, `at most ${maxIds} ids`),
    )
    .optional()
    .describe(description);
}

/** A true/false query flag; anything else is refused (z.coerce.boolean would read "false" as true). */
export function flagParam(description: string) {
  return z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true')
    .describe(description);
}

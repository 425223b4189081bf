import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { StoreCalls } from '../../infra/store.ts';
import type { CachedRoute } from '../responseCache.ts';

const chainsSql = readFileSync(new URL('./chains.sql', import.meta.url), 'utf8');
const daySeconds = 86_400;

/** Chain row (spec 2.6). */
const chainRow = z.object({
  id: z.string(),
  name: z.string().describe('a simulated chain says so in its name'),
  volume24h: z.number().describe('USD value of the swaps of the last 24 h, one leg per swap (stablecoin at par, else our index price); swaps with no valued leg add 0'),
  swaps24h: z.number().describe('Swap logs of indexed pools in the last 24 h'),
  pools24h: z.number().describe('pools with at least one swap in the last 24 h'),
  dexes24h: z.number().describe('DEX deployments (factories by configured name) with at least one swap in the last 24 h'),
  poolsIndexed: z.number().int().describe('pools created by the indexed factories, all time'),
  tokensIndexed: z.number().int().describe('distinct token addresses of those pools'),
  volumeChange24h: z.number().nullable().describe('percent change of volume24h against the 24 h before; null unless the indexed history covers that window and its volume is above 0'),
  volumeChange7d: z.number().nullable().describe('percent change of volume24h against the same 24 h a week earlier; null unless the indexed history covers that window and its volume is above 0'),
});
export type ChainRow = z.infer<typeof chainRow>;

const chainsResponse = z.object({ chains: z.array(chainRow).describe('largest volume24h first') });

interface ChainSums {
  id: string;
  name: string;
  volume24h: number | null;
  swaps24h: number | null;
  pools24h: number | null;
  dexes24h: number | null;
  volumePrev24h: number | null;
  volumeWeekAgo24h: number | null;
  poolsIndexed: number | null;
  tokensIndexed: number | null;
  historyFrom: number | null;
}

/**
 * A volume change in percent, only when the indexed history starts before the earlier window
 * (so that window is complete) and that window had volume to compare with.
 */
function volumeChange(current: number, earlier: number, earlierFrom: number, historyFrom: number | null): number | null {
  if (historyFrom === null || historyFrom >= earlierFrom || !(earlier > 0)) return null;
  return (current / earlier - 1) * 100;
}

/** Every chain the indexer registered, with its last 24 h of DEX activity; windows end at `now`. */
export async function loadChainRows(store: StoreCalls, now: number): Promise<ChainRow[]> {
  const nowS = Math.floor(now / 1000);
  const windows = { day_s: nowS - daySeconds, prev_s: nowS - 2 * daySeconds, week_s: nowS - 8 * daySeconds, week_end_s: nowS - 7 * daySeconds };
  const rows = await store.rows<ChainSums>(chainsSql, { ...windows, from_s: windows.week_s });
  return rows
    .map((r) => {
      const volume24h = r.volume24h ?? 0;
      return {
        id: r.id,
        name: r.name,
        volume24h,
        swaps24h: r.swaps24h ?? 0,
        pools24h: r.pools24h ?? 0,
        dexes24h: r.dexes24h ?? 0,
        poolsIndexed: r.poolsIndexed ?? 0,
        tokensIndexed: r.tokensIndexed ?? 0,
        volumeChange24h: volumeChange(volume24h, r.volumePrev24h ?? 0, windows.prev_s, r.historyFrom),
        volumeChange7d: volumeChange(volume24h, r.volumeWeekAgo24h ?? 0, windows.week_s, r.historyFrom),
      };
    })
    .sort((a, b) => b.volume24h - a.volume24h || (a.id < b.id ? -1 : 1));
}

/** GET /v1/chains (spec 4.10): one row per indexed chain. */
export function chainsRoute(deps: { store: StoreCalls }): CachedRoute {
  return {
    path: '/v1/chains',
    refreshSeconds: 60,
    doc: {
      operationId: 'chains',
      tag: 'Market',
      summary: 'DEX activity per indexed blockchain: 24 h USD volume, swaps, active pools and DEXes, registry sizes',
      query: z.object({}),
      response: chainsResponse,
      errors: [],
    },
    resolve() {
      return { key: '*', build: async () => ({ chains: await loadChainRows(deps.store, Date.now()) }) };
    },
  };
}

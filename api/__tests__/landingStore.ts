// The test store as a route sees it while the collectors write: before each read the route makes,
// `land(n)` writes the n-th landing through the real store (n = 1, 2, ... one per read), and the
// reads run one after another in the order they are made, so that each sees one landing more than
// the one before. Two reads of one figure then disagree; a response built from one read cannot.
import type { StoreCalls } from '../../infra/store.ts';

export interface LandingStore {
  /** Pass to the API under test (TestApi.serve({ store })). */
  store: StoreCalls;
  /** Landings written so far: one per read. */
  landed(): number;
}

export function landingStore(store: StoreCalls, land: (n: number) => Promise<void>): LandingStore {
  let landed = 0;
  let previous: Promise<unknown> = Promise.resolve();
  const landThenRead = async <T>(query: string, params?: Record<string, unknown>): Promise<T[]> => {
    await previous.catch(() => undefined);
    landed += 1;
    await land(landed);
    return store.rows<T>(query, params);
  };
  return {
    store: {
      insert: (table, rows, token) => store.insert(table, rows, token),
      rows: <T>(query: string, params?: Record<string, unknown>) => {
        const read = landThenRead<T>(query, params);
        previous = read;
        return read;
      },
    },
    landed: () => landed,
  };
}

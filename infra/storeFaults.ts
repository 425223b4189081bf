import { setTimeout as sleep } from 'node:timers/promises';
import { defaultStoreTimeouts, withDeadline, type Store, type StoreTimeouts } from './store.ts';

/**
 * What the wrapped store does to every call from now on: `ok` passes calls through; `fail` refuses
 * every call, `failquery` only queries, `failinsert` only inserts; `slowMs` delays each call before
 * passing it through; `hang` never settles, as a stuck engine call would (the deadline then fires).
 */
export type StoreFault = 'ok' | 'fail' | 'failquery' | 'failinsert' | { slowMs: number } | 'hang';

/** The error an injected failure raises. */
export class StoreFaultError extends Error {
  override name = 'StoreFaultError';
}

export interface StoreFaults {
  /** The wrapped store: hand it to the code under test. */
  readonly store: Store;
  set(fault: StoreFault): void;
  current(): StoreFault;
  /** Calls made through `store` so far, whatever the fault did with them. */
  calls(): { queries: number; inserts: number };
}

/**
 * Wraps a real store so that tests and the soak run can make it slow, failing or hung. Every call
 * keeps the store's deadlines (`timeouts`, default the configuration's), so `hang` shows what a
 * stuck call does to its callers.
 */
export function withStoreFaults(store: Store, timeouts: Partial<StoreTimeouts> = {}): StoreFaults {
  const { queryTimeoutMs, insertTimeoutMs } = { ...defaultStoreTimeouts, ...timeouts };
  let fault: StoreFault = 'ok';
  const calls = { queries: 0, inserts: 0 };

  async function faulted<T>(failsOn: StoreFault, signal: AbortSignal, pass: () => Promise<T>): Promise<T> {
    const now = fault;
    if (now === 'fail' || now === failsOn) throw new StoreFaultError(`injected store fault: ${now}`);
    if (now === 'hang') return new Promise<never>(() => {});
    if (typeof now === 'object') await sleep(now.slowMs, undefined, { signal });
    return pass();
  }

  const wrapped: Store = {
    client: store.client,
    description: `${store.description} with fault injection`,
    insert(table, rows, dedupToken) {
      calls.inserts += 1;
      return withDeadline('insert', insertTimeoutMs, (signal) => faulted('failinsert', signal, () => store.insert(table, rows, dedupToken)));
    },
    rows<T>(query: string, params?: Record<string, unknown>) {
      calls.queries += 1;
      return withDeadline('query', queryTimeoutMs, (signal) => faulted('failquery', signal, () => store.rows<T>(query, params)));
    },
    close: () => store.close(),
  };

  return {
    store: wrapped,
    set(next) {
      fault = next;
    },
    current: () => fault,
    calls: () => ({ ...calls }),
  };
}

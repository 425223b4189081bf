/**
 * How old a gauge's store reading (the store's disk, its memory) may be when a scrape reports it.
 * Embedded, the pipeline's queries share a lane of two places (storeLane.ts), and chDB runs those
 * with parameters one at a time: a client that polls /metrics every second would add two queries a
 * second to that lane, beside the index's inputs and the sinks' lookups.
 */
export const storeGaugeMaxAgeMs = 10_000;

/**
 * `read` taken at most once per `maxAgeMs`, whatever the rate of its callers: a reading younger
 * than that is answered again, and callers while a read is out share that read. A failed read is
 * not kept (the next caller reads again) and fails its callers.
 */
export function recentReading<T>(read: () => Promise<T>, maxAgeMs: number, now: () => number = Date.now): () => Promise<T> {
  let last: { value: T; at: number } | undefined;
  let pending: Promise<T> | undefined;
  const readAgain = async (): Promise<T> => {
    try {
      const value = await read();
      last = { value, at: now() };
      return value;
    } finally {
      pending = undefined;
    }
  };
  return () => {
    if (last && now() - last.at < maxAgeMs) return Promise.resolve(last.value);
    return (pending ??= readAgain());
  };
}

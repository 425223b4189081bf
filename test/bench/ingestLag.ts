// The live ingest lag of the embedded service, read from its /metrics (recovery.bench.ts and
// sql.bench.ts): from the end of a second of venue time until the trade sink has committed (stored,
// then committed on the bus) every trade the bus had taken up to that second's end. The bus is
// ordered per asset and the sink commits only what it stored, so the trades topic's published
// count less the sink group's uncommitted records is what is stored, in the order it came. The
// published count of a second is read 250 ms after its end (a trade takes about 50 ms from the
// venue to the bus here), so a lag may include up to one scrape interval more.
import { metricSum } from '../soak.ts';

/** What one scrape of /metrics says of the trades topic. */
export interface PipelineScrape {
  at: number;
  /** Trades the bus has taken. */
  published: number;
  /** Of them, those the trade sink has stored and committed. */
  committed: number;
}

/** The published and committed trade counts of a /metrics text. */
export function pipelineCounts(text: string): Omit<PipelineScrape, 'at'> {
  const published = metricSum(text, 'mds_bus_published_total', 'topic="trades"');
  return { published, committed: published - metricSum(text, 'mds_bus_lag_records', 'group="aggregate-trades"') };
}

/** How long after a second's end its trades are on the bus: read the published count this much later. */
const toBusMs = 250;

/** Per venue second in [from, to): the delay (ms) from its end until the sink had committed every trade published by then. */
export function lagsMs(scrapes: readonly PipelineScrape[], from: number, to: number): number[] {
  const lags: number[] = [];
  let p = 0;
  let c = 0;
  for (let second = Math.floor(from / 1_000); (second + 1) * 1_000 <= to; second++) {
    const end = (second + 1) * 1_000;
    while (p < scrapes.length && scrapes[p]!.at < end + toBusMs) p++;
    if (p === scrapes.length) break;
    const owed = scrapes[p]!.published;
    while (c < scrapes.length && scrapes[c]!.committed < owed) c++;
    if (c === scrapes.length) break;
    lags.push(scrapes[c]!.at - end);
  }
  return lags;
}

/** The p-th percentile (0-100, nearest rank) of `values`; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

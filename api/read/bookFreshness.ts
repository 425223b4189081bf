/** Book metrics (market_quality) older than this are neither shown nor scored: the book they describe is gone. */
export const qualityFreshMs = 60_000;

// glibc's malloc serves a block of at least its mmap threshold from a mapping of its own, given back
// whole when freed; a smaller one comes from an arena, whose free room stays in the RSS. The
// threshold starts at 128 KiB and glibc raises it (up to 32 MiB) each time such a block is freed,
// after which blocks of a few hundred KiB come from the arenas too: on the universe demo no block
// had a mapping of its own after 17 minutes, and after 30 malloc held 245 MB for 158 MB in use.
// Set, the threshold stays at 128 KiB: 162 MB held, 31 MB of it free, and the demo's RSS about
// 100 MB lower (test/bench/RESULTS.md).

/** The threshold (bytes): glibc's starting value, kept. */
export const mallocMmapThresholdBytes = 131_072;

/**
 * The environment that sets it. glibc reads it only at the process's start, so package.json's role
 * scripts carry it, as do the market bench and the soak that start the service; elsewhere it is ignored.
 */
export const mallocEnv = { MALLOC_MMAP_THRESHOLD_: String(mallocMmapThresholdBytes) } as const;

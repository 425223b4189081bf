// The young generation each thread of the service gets: the part of V8's heap where new objects
// start. V8's default on this machine is 192 MB a thread (64 MB semi-spaces), and a busy thread
// keeps much of it committed: on the universe demo the main thread's new space held 128 MB. With
// 16 MB semi-spaces the heaps the demo's threads held 10 minutes in were 252 MB instead of 381 (main),
// 281 instead of 360 (collectors) and 344 instead of 439 (simulator); test/bench/RESULTS.md.

/** Each semi-space (MB): V8's young generation is three of them (two semi-spaces and the room for large new objects). */
export const semiSpaceMb = 16;
/** What a worker thread is given (`resourceLimits.maxYoungGenerationSizeMb`). */
export const youngGenerationMb = 3 * semiSpaceMb;
/**
 * What gives the main thread the same: a node flag, read only at the process's start (package.json's
 * role scripts carry it). A flag set later would bind every worker, not the main thread.
 */
export const mainThreadNodeFlag = `--max-semi-space-size=${semiSpaceMb}`;

// Setup of the `store` project (vitest.config.ts): an embedded store and the API on loopback, no process.
import { afterAll, vi } from 'vitest';
import { refuseProcesses } from './projectGuard.ts';

refuseProcesses('store');

// Store files share their worker's process (vitest.config.ts): a file's fake clock ends with it.
afterAll(() => {
  vi.useRealTimers();
});

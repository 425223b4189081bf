// Setup of the `store` project (vitest.config.ts): an embedded store and the API on loopback, no process.
import { refuseProcesses } from './projectGuard.ts';

refuseProcesses('store');

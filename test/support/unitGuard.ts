// Setup of the `unit` project (vitest.config.ts): no store, no socket, no process.
import { vi } from 'vitest';
import { refuseProcesses, refuseSockets } from './projectGuard.ts';

vi.mock('chdb/connection', async () => {
  const { refusal } = await import('./projectGuard.ts');
  return { createChdbConnection: refusal('an embedded store (chDB)', 'unit', 'store') };
});
refuseSockets('unit');
refuseProcesses('unit');

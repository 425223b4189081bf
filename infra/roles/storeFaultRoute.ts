// A module of its own, without the store's imports: the API's thread mounts this route and must
// not load chDB (apiWorker.ts).
import express from 'express';
import { z } from 'zod';
import type { Logger } from '../log.ts';
import { isLoopback } from '../operatorAccess.ts';
import type { StoreFaults } from '../storeFaults.ts';

/** Soak runs: `POST /__faults/store {"fault": "fail", "ms": 60000}` from loopback fails the store for a while. */
export function storeFaultRoute(faults: Pick<StoreFaults, 'set'>, log: Logger): express.Router {
  const body = z.object({ fault: z.enum(['ok', 'fail', 'failquery', 'failinsert', 'hang']), ms: z.number().int().positive().optional() });
  const router = express.Router();
  let timer: NodeJS.Timeout | undefined;
  router.post('/__faults/store', express.json(), (req, res) => {
    const parsed = body.safeParse(req.body);
    if (!isLoopback(req.socket.remoteAddress) || !parsed.success) {
      res.status(400).json({ error: { code: 'bad_request', message: 'expected {"fault": "ok"|"fail"|"failquery"|"failinsert"|"hang", "ms"?} from loopback', status: 400 } });
      return;
    }
    clearTimeout(timer);
    faults.set(parsed.data.fault);
    if (parsed.data.ms) timer = setTimeout(() => faults.set('ok'), parsed.data.ms);
    log.warn({ fault: parsed.data.fault, ms: parsed.data.ms }, 'store fault injected');
    res.json({ fault: parsed.data.fault, ms: parsed.data.ms ?? null });
  });
  return router;
}

import type { Logger } from '../log.ts';

/** How long one part may take to stop before the next one is stopped anyway. */
const stopDeadlineMs = 15_000;

/** Stops registered parts in reverse order of start, once, on SIGINT/SIGTERM or a fatal error. */
export class Lifecycle {
  private stops: { name: string; stop: () => Promise<unknown> }[] = [];
  private stopping: Promise<void> | undefined;
  private readonly log: Logger;
  constructor(log: Logger) {
    this.log = log;
  }
  add(name: string, stop: () => Promise<unknown>): void {
    this.stops.push({ name, stop });
  }
  shutdown(reason: string): Promise<void> {
    this.stopping ??= (async () => {
      this.log.info({ reason }, 'shutting down');
      for (const { name, stop } of this.stops.reverse()) {
        let timer: NodeJS.Timeout | undefined;
        // A part that hangs (a store call that never returns) must not keep the process from stopping.
        const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), stopDeadlineMs)));
        try {
          if ((await Promise.race([stop(), deadline])) === 'late') this.log.error({ part: name, ms: stopDeadlineMs }, 'part did not stop in time; going on');
        } catch (err) {
          this.log.error({ err, part: name }, 'error while stopping');
        } finally {
          clearTimeout(timer);
        }
      }
      this.log.info('stopped');
    })();
    return this.stopping;
  }
}

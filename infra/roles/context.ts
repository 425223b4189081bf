import type { Config } from '../config.ts';
import type { ReadinessCheck } from '../health.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { Lifecycle } from './lifecycle.ts';

/** What every part of a role is wired with: it registers its stop, its metrics and its readiness checks here. */
export interface RoleContext {
  config: Config;
  log: Logger;
  life: Lifecycle;
  metrics: Metrics;
  checks: ReadinessCheck[];
}

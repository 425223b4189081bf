import { fearGreedJob } from '../../aggregate/jobs/fearGreed.ts';
import { fxReferenceJob } from '../../aggregate/jobs/fxReference.ts';
import { etfFlowsJob } from '../../aggregate/jobs/etfFlows.ts';
import { chainIndexerJobs } from '../../aggregate/jobs/chains/evmIndexer.ts';
import { identityJoinsJob } from '../../aggregate/jobs/identityJoins.ts';
import { delistedRetirementsJob } from '../../aggregate/jobs/delistedRetirements.ts';
import { tokenSuppliesJobs } from '../../aggregate/jobs/chains/tokenSupplies.ts';
import { identities } from '../catalog/identities.ts';
import type { Config } from '../config.ts';
import type { Job } from '../jobs.ts';

/**
 * The scheduled jobs the service runs (role `jobs`, and inside `all` and `demo`). One list, so
 * the embedded timers and the bullmq workers run exactly the same set. Add a job here by
 * exporting its `Job` from the module that owns it; names must stay unique and stable.
 */
export function serviceJobs(config: Config): Job[] {
  return [fearGreedJob, delistedRetirementsJob, ...(identities.mappings.length > 0 ? [identityJoinsJob] : []), ...(config.FX_REFERENCE_FILE ? [fxReferenceJob(config.FX_REFERENCE_FILE)] : []), ...(config.ETF_FLOWS_DIR ? [etfFlowsJob(config.ETF_FLOWS_DIR)] : []), ...chainIndexerJobs(config), ...tokenSuppliesJobs(config)];
}

// The store as a role opens it (infra/roles/store.ts): embedded, the pipeline's queries share a lane
// and the API's (`foreground`) go around it; the lane's queue is a gauge of /metrics.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createMetrics } from '../metrics.ts';
import { Lifecycle } from '../roles/lifecycle.ts';
import { openRoleStore, type RoleStore } from '../roles/store.ts';
import type { RoleContext } from '../roles/context.ts';
import { silentLog, testConfig } from '../../test/support/harness.ts';
import { copyStoreTemplate } from '../../test/support/storeTemplate.ts';

const dir = mkdtempSync(join(tmpdir(), 'mds-role-store-'));
let ctx: RoleContext;
let opened: RoleStore;

beforeAll(async () => {
  copyStoreTemplate(dir);
  ctx = { config: testConfig({ MDS_DATA_DIR: dir }), log: silentLog, life: new Lifecycle(silentLog), metrics: createMetrics(), checks: [] };
  opened = await openRoleStore(ctx, { migrate: true });
});

afterAll(async () => {
  await ctx?.life.shutdown('test end');
  rmSync(dir, { recursive: true, force: true });
});

const busy = 'SELECT count() AS n FROM numbers({rows:UInt64}) WHERE cityHash64(number) % 7 = {rest:UInt8}';

test("a query of the foreground is answered ahead of the pipeline's burst of 8, and the waiting ones show in /metrics", async () => {
  const order: string[] = [];
  const burst = Array.from({ length: 8 }, (_, i) => opened.store.rows(busy, { rows: 3_000_000, rest: 3 }).then(() => order.push(`pipeline ${i}`)));
  await new Promise((resolve) => setImmediate(resolve));
  const waiting = await ctx.metrics.registry.getSingleMetricAsString('mds_store_queries_waiting');
  const api = opened.foreground.rows('SELECT {tag:String} AS tag', { tag: 'api' }).then(() => order.push('api'));
  await Promise.all([...burst, api]);
  expect(order.indexOf('api')).toBeLessThanOrEqual(2);
  expect(waiting).toMatch(/^mds_store_queries_waiting 6$/m);
  expect(await ctx.metrics.registry.getSingleMetricAsString('mds_store_queries_waiting')).toMatch(/^mds_store_queries_waiting 0$/m);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, expect, test } from 'vitest';
import { resetBounds, type RequestTiming } from '../support/quotaWindow.ts';

const redisUrl = process.env.MDS_TEST_REDIS_URL;
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(async () => {
  // Each replica's data directory is removed once the replica has exited: before, its last writes
  // could land in a directory already removed and leave it behind.
  const exited = children.map((child) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()))));
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(exited);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Starts one API replica process; resolves with its URL once it listens. */
function startReplica(env: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mds-replica-'));
  dirs.push(dir);
  const child = spawn(process.execPath, [join(import.meta.dirname, 'apiProcess.ts')], {
    env: { ...process.env, ...env, DATA_DIR: dir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`replica exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
  });
}

test('the 601st request of the hour is 429, counted across two API processes sharing Redis', async () => {
  expect(redisUrl, 'MDS_TEST_REDIS_URL must point at a redis-server (npm test starts one)').toBeTruthy();
  const key = `mds_${randomUUID().replaceAll('-', '')}`;
  // The default quota (600 per hour), not a test-sized one: this is the spec's edge.
  const env = { API_KEY: key, API_KEY_SECRET: randomUUID().repeat(2), REDIS_URL: redisUrl!, QUOTA_PREFIX: `mds-test:${randomUUID()}`, LOG_LEVEL: 'warn' };
  const [a, b] = await Promise.all([startReplica(env), startReplica(env)]);

  const remaining: number[] = [];
  const ask = async (url: string) => {
    const res = await fetch(`${url}/v1/exchanges`, { headers: { 'x-api-key': key } });
    await res.arrayBuffer();
    return res;
  };
  // Alternate replicas in bursts of 50, as a load balancer would spread one client.
  let first: RequestTiming | undefined;
  for (let i = 0; i < 600; i += 50) {
    const url = (i / 50) % 2 === 0 ? a : b;
    const sentAt = Date.now();
    const batch = await Promise.all(Array.from({ length: 50 }, () => ask(url)));
    // The window opened with one of the first burst's requests.
    first ??= { sentAt, receivedAt: Date.now() };
    for (const res of batch) {
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('600');
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
  }
  // Every request was counted once, on whichever replica: remaining took every value 599..0 once.
  expect(remaining.sort((x, y) => y - x)).toEqual(Array.from({ length: 600 }, (_, i) => 599 - i));

  for (const url of [a, b]) {
    const sentAt = Date.now();
    const res = await ask(url);
    const [min, max] = resetBounds(first!, { sentAt, receivedAt: Date.now() });
    expect(res.status).toBe(429);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThanOrEqual(min);
    expect(reset).toBeLessThanOrEqual(max);
    expect(res.headers.get('retry-after')).toBe(String(reset));
  }
});

// The hostile clients of the soak (issue #29): a fuzzing client that sends random requests all
// run long (test/support/fuzzRequests.ts), and floods of idle connections held from other addresses
// (test/support/idleFlood.ts, in processes of their own: each holds thousands of sockets).
import { spawn } from 'node:child_process';
import fc from 'fast-check';
import { fuzzFetch, fuzzRequest } from './support/fuzzRequests.ts';
import type { FloodCounts } from './support/idleFlood.ts';

/** What the fuzzing client got: answers by status class, and what no healthy service gives. */
export interface FuzzCounts {
  sent: number;
  byClass: Record<string, number>;
  /** 5xx other than 503 (a store outage, data not loaded), with when and what. */
  serverErrors: { at: number; what: string }[];
  /** No answer within the client's wait, or the connection failed: when and what. */
  noAnswer: { at: number; what: string }[];
}

/** Sends one random request every `everyMs` to `base` until stopped; each waits at most `answerMs`. */
export function startFuzzClient(base: string, key: string, options: { everyMs?: number; answerMs?: number; seed?: number } = {}): { stop(): Promise<FuzzCounts> } {
  const { everyMs = 100, answerMs = 10_000, seed = 29 } = options;
  const counts: FuzzCounts = { sent: 0, byClass: {}, serverErrors: [], noAnswer: [] };
  const samples = fc.sample(fuzzRequest, { numRuns: 1_000, seed });
  const inFlight = new Set<Promise<void>>();
  const sendOne = async () => {
    const { url, init } = fuzzFetch(base, key, samples[counts.sent % samples.length]!);
    counts.sent += 1;
    const at = Date.now();
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(answerMs) });
      await res.arrayBuffer();
      const cls = `${Math.floor(res.status / 100)}xx`;
      counts.byClass[cls] = (counts.byClass[cls] ?? 0) + 1;
      if (res.status >= 500 && res.status !== 503) counts.serverErrors.push({ at, what: `${init.method} ${url} -> ${res.status}` });
    } catch (err) {
      counts.noAnswer.push({ at, what: `${init.method} ${url}: ${(err as Error).name === 'TimeoutError' ? `no answer in ${answerMs} ms` : (err as Error).message}` });
    }
  };
  const timer = setInterval(() => {
    const p = sendOne().finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      return counts;
    },
  };
}

/** Holds `connections` idle connections to `port` for `ms`, from two processes (file descriptors are per process). */
export async function idleFlood(port: number, connections: number, ms: number): Promise<FloodCounts[]> {
  const processes = 2;
  const each = Math.ceil(connections / processes);
  return Promise.all(Array.from({ length: processes }, (_, i) => floodProcess(port, each, ms, 2 + i * 20)));
}

function floodProcess(port: number, count: number, ms: number, firstOctet: number): Promise<FloodCounts> {
  const child = spawn(process.execPath, [new URL('./support/idleFlood.ts', import.meta.url).pathname, String(port), String(count), String(ms), String(firstOctet)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as FloodCounts) : reject(new Error(`idle flood exited with ${code}`))));
  });
}

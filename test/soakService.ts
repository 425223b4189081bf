// The soak's service: the whole embedded service (`main.ts all`) as a process of its own, which the
// soak may kill with SIGKILL and start again on the same data directory, as an operator's host would.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { until } from './support/until.ts';
import { roleCommand } from './support/roleCommand.ts';
import { stopChild } from './support/stopChild.ts';

export function rssMbOf(pid: number | undefined): number | undefined {
  return procStatusMbOf(pid, 'VmRSS');
}

/** One kB figure of /proc/<pid>/status (VmRSS, RssAnon), MB; undefined once the process is gone. */
export function procStatusMbOf(pid: number | undefined, field: 'VmRSS' | 'RssAnon'): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export async function getJson(url: string, key?: string): Promise<{ status: number; body: unknown }> {
  try {
    const res = await fetch(url, { headers: key ? { 'x-api-key': key } : {}, signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: await res.json().catch(() => undefined) };
  } catch {
    return { status: 0, body: undefined };
  }
}

export class SoakService {
  readonly base: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #args: string[];
  readonly #log: WriteStream;
  #child: ChildProcess | undefined;
  /** The exit code of the current process once it exited; undefined while it runs. */
  #exited: number | null | undefined;
  /** Set while the soak itself has killed the process (a planned death, not a failure). */
  #killedOnPurpose = false;

  constructor(options: { port: number; env: NodeJS.ProcessEnv; venues: readonly string[]; logFile: string }) {
    this.base = `http://127.0.0.1:${options.port}`;
    // As `npm start` starts it (roleCommand).
    const command = roleCommand('all', ['--venues', options.venues.join(',')], options.env);
    this.#env = command.env;
    this.#args = command.argv;
    this.#log = createWriteStream(options.logFile, { flags: 'a' });
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The exit code when the process ended without the soak killing it. */
  get failedExit(): number | null | undefined {
    return this.#killedOnPurpose ? undefined : this.#exited;
  }

  /** Starts the process and resolves once its API answers /health. */
  async start(): Promise<void> {
    this.#exited = undefined;
    this.#killedOnPurpose = false;
    const child = spawn(process.execPath, this.#args, { env: this.#env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(this.#log, { end: false });
    child.stderr!.pipe(this.#log, { end: false });
    child.once('exit', (code) => (this.#exited = code));
    this.#child = child;
    await until(
      async () => {
        if (this.#exited !== undefined) throw new Error(`soak: the service exited (${this.#exited}) at start; its log: ${this.#log.path}`);
        return (await getJson(`${this.base}/health`)).status === 200;
      },
      'soak: the API to listen',
      { timeoutMs: 120_000, everyMs: 250 },
    );
  }

  /** Resolves once /v1/prices serves bitcoin `measured`: the pipeline runs end to end (two minutes at most). */
  /** Until each of `assets` has a measured price (default: bitcoin alone). */
  async untilMeasured(key: string, assets: readonly string[] = ['bitcoin']): Promise<void> {
    const measured = async () => {
      const prices = ((await getJson(`${this.base}/v1/prices?ids=${assets.join(',')}`, key)).body as { prices?: { measured: boolean }[] } | undefined)?.prices;
      return prices?.length === assets.length && prices.every((p) => p.measured);
    };
    await until(measured, `soak: measured prices of ${assets.join(', ')}`, { timeoutMs: 120_000, everyMs: 250 });
  }

  /** SIGKILL: no stop sequence, what the in-process bus held is lost. */
  async kill(): Promise<void> {
    this.#killedOnPurpose = true;
    const child = this.#child!;
    const exited = new Promise<void>((resolve) => (this.#exited !== undefined ? resolve() : child.once('exit', () => resolve())));
    child.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM, and its exit code. */
  async stop(): Promise<number | null> {
    const { code } = await stopChild(this.#child!);
    this.#log.end();
    return code;
  }
}

// The API as its tests use it: a test store (harness.ts), an API key, the API listening on a free
// loopback port, requests with that key, and everything closed at the end: `useTestApi` in a file
// or a describe block. `listenOnLoopback` serves an Express app a test builds itself.
import { once } from 'node:events';
import { request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Application } from 'express';
import { afterAll, beforeAll, vi } from 'vitest';
import type { Config } from '../../infra/config.ts';
import type { Logger } from '../../infra/log.ts';
import type { Store, StoreCalls } from '../../infra/store.ts';
import { KeyStore } from '../../api/keys.ts';
import { startApi, type ApiServer, type StartApiOptions } from '../../api/server.ts';
import { get, openTestStore, silentLog, testConfig } from './harness.ts';

/** What startApi takes besides the store, the config and the log. */
type ServerOptions = Omit<StartApiOptions, 'store' | 'config' | 'log'>;

/** One more API on the harness's store (or another, such as a fault wrapper around it). */
export interface ServeOptions extends ServerOptions {
  /** Settings over testConfig's (PORT 0, silent logs). */
  env?: Record<string, string>;
  store?: StoreCalls;
  log?: Logger;
}

export interface TestApiOptions extends ServeOptions {
  /** The name of the API key made before the API starts; none is made without it. */
  keyName?: string;
  /** Writes the file's data into the store before the API starts. */
  seed?: (store: Store) => Promise<void>;
  /** Fixes Date.now() here (only Date is faked, timers run) from before the seed until the end. */
  now?: number;
  /** false: the store and the key only, the APIs started with serve(). Default true. */
  listen?: boolean;
}

/** A fresh test store, a key and the APIs on it; read its fields once it has started (in a test or a later hook). */
export class TestApi {
  readonly #options: TestApiOptions;
  readonly #servers: ApiServer[] = [];
  #dispose: (() => Promise<void>) | undefined;
  store!: Store;
  /** The API key named keyName. */
  key!: string;
  /** The config the first API runs with. */
  config!: Config;
  /** The API started with the harness (unless listen is false). */
  server!: ApiServer;

  constructor(options: TestApiOptions) {
    this.#options = options;
  }

  /** http://127.0.0.1:<port> of the harness's API. */
  get url(): string {
    return this.server.url;
  }

  async start(): Promise<this> {
    const { keyName, seed, now, listen = true, ...serve } = this.#options;
    if (now !== undefined) vi.useFakeTimers({ toFake: ['Date'], now });
    const opened = await openTestStore();
    this.store = opened.store;
    this.#dispose = opened.dispose;
    await seed?.(this.store);
    if (keyName) this.key = (await new KeyStore(this.store).create(keyName)).key;
    this.config = testConfig(serve.env);
    if (listen) this.server = await this.serve(serve);
    return this;
  }

  /** Starts one more API (closed with the harness, or before by its own close()). */
  async serve(options: ServeOptions = {}): Promise<ApiServer> {
    const { env, store, log, ...server } = options;
    const api = await startApi({ store: store ?? this.store, config: testConfig(env), log: log ?? silentLog, ...server });
    let closed: Promise<void> | undefined;
    const tracked: ApiServer = { ...api, close: () => (closed ??= api.close()) };
    this.#servers.push(tracked);
    return tracked;
  }

  /** A request to the harness's API with its key (headers given here are added). */
  get(path: string, headers: Record<string, string> = {}, method = 'GET'): ReturnType<typeof get> {
    return get(this.url + path, { 'x-api-key': this.key, ...headers }, method);
  }

  /** A request to the harness's API without a key. */
  getWithoutKey(path: string, headers: Record<string, string> = {}, method = 'GET'): ReturnType<typeof get> {
    return get(this.url + path, headers, method);
  }

  /** Closes every API it started, then its store; real Date again. */
  async close(): Promise<void> {
    for (const server of this.#servers.splice(0)) await server.close();
    await this.#dispose?.();
    this.#dispose = undefined;
    if (this.#options.now !== undefined) vi.useRealTimers();
  }
}

/** A TestApi started in beforeAll and closed in afterAll of the file or describe block it is called in. */
export function useTestApi(options: TestApiOptions): TestApi {
  const api = new TestApi(options);
  beforeAll(async () => {
    await api.start();
  });
  afterAll(() => api.close());
  return api;
}

/** An Express app built by a test, listening on a free loopback port. */
export interface LoopbackServer {
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

export async function listenOnLoopback(app: Application): Promise<LoopbackServer> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

/**
 * A GET with exactly these headers (a chosen Host and Origin among them), answered as sent: the
 * body not decoded, as fetch would, so that its encoding and length can be checked.
 */
export function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, path: target.pathname + target.search, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

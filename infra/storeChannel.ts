// The local store channel: a process that holds the embedded store (chDB lets one process open
// it) serves it on <MDS_DATA_DIR>/store.sock, owner-only like the admin channel, so that a
// command run beside it (`npm run import`) reads and writes the same store through it. Its client
// is a StoreCalls, plus the commands the serving role adds (an import's bulk insert, its index).
// Protocol, one request per connection: a JSON header line, then `bytes` bytes of payload (bulk
// data, e.g. a chunk of tab-separated rows); the client ends its side, the server answers one JSON
// line: {"ok":true,"value":...} or {"ok":false,"error":{"name","message"}}.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Logger } from './log.ts';
import { serveOwnerOnly } from './ownerSocket.ts';
import { redactCredentials } from './redact.ts';
import type { StoreCalls } from './store.ts';

/** `<MDS_DATA_DIR>/store.sock` */
export function storeSocketPath(dataDir: string): string {
  return resolve(dataDir, 'store.sock');
}

/** A command a role adds to its channel: JSON arguments and the payload bytes in, a JSON value out. */
export type ChannelCommand = (args: Record<string, unknown>, payload: Buffer) => Promise<unknown>;

const headerSchema = z.object({ call: z.string().min(1), args: z.record(z.string(), z.unknown()).default({}), bytes: z.number().int().min(0).default(0) });

/** A request larger than this is refused (a bulk chunk is tens of MB). */
const maxRequestBytes = 512 * 1024 * 1024;

/** Nothing answers on the socket: no process holds the store, or its role serves no channel. Nothing was sent. */
export class StoreChannelAbsentError extends Error {
  override name = 'StoreChannelAbsentError';
}

/** The serving process answered with an error: its name and message are the original's. */
export class StoreChannelError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

export interface StoreChannel {
  readonly path: string;
  /** Stops accepting requests and removes the socket. */
  close(): Promise<void>;
}

type Answer = { ok: true; value: unknown } | { ok: false; error: { name: string; message: string } };

/** `rows` and `insert` of the store, then the role's own commands. */
function handlersOf(store: StoreCalls, commands: Record<string, ChannelCommand>): Record<string, ChannelCommand> {
  return {
    rows: (args) => store.rows(String(args.query), (args.params ?? {}) as Record<string, unknown>),
    insert: async (args) => {
      await store.insert(String(args.table), args.rows as object[], args.dedupToken === undefined ? undefined : String(args.dedupToken));
      return null;
    },
    ...commands,
  };
}

function serve(socket: Socket, handlers: Record<string, ChannelCommand>, log: Logger): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const reply = (body: Answer) => socket.end(`${JSON.stringify(body)}\n`);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxRequestBytes) return void socket.destroy();
    chunks.push(chunk);
  });
  socket.on('end', () => {
    const request = Buffer.concat(chunks);
    const newline = request.indexOf(10);
    const header = headerSchema.safeParse(newline < 0 ? undefined : safeJson(request.subarray(0, newline).toString('utf8')));
    if (!header.success) return reply({ ok: false, error: { name: 'BadRequest', message: 'expected a JSON header line {"call":...,"args":{...},"bytes":n}' } });
    const { call, args, bytes } = header.data;
    const payload = request.subarray(newline + 1);
    if (payload.length !== bytes) return reply({ ok: false, error: { name: 'BadRequest', message: `expected ${bytes} payload bytes, got ${payload.length}` } });
    const handler = handlers[call];
    if (!handler) return reply({ ok: false, error: { name: 'BadRequest', message: `unknown call ${call}: ${Object.keys(handlers).join(', ')}` } });
    handler(args, payload).then(
      (value) => reply({ ok: true, value: value ?? null }),
      (err: Error) => {
        log.warn({ err, call }, 'store channel request failed');
        reply({ ok: false, error: { name: err.name, message: redactCredentials(err.message) } });
      },
    );
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Serves `store` and `commands` on an owner-only socket at `path` (SocketTakenError when a live channel answers there). */
export async function serveStoreChannel(path: string, store: StoreCalls, commands: Record<string, ChannelCommand>, log: Logger): Promise<StoreChannel> {
  const handlers = handlersOf(store, commands);
  return serveOwnerOnly(path, 'store channel', (socket) => serve(socket, handlers, log));
}

export interface StoreChannelClient extends StoreCalls {
  /** One of the serving role's commands. */
  call<T>(name: string, args?: Record<string, unknown>, payload?: Buffer): Promise<T>;
}

/** The client of the channel at `path`. A call throws StoreChannelAbsentError when nothing answers (nothing was sent). */
export function storeChannelClient(path: string, timeoutMs = 600_000): StoreChannelClient {
  async function call<T>(name: string, args: Record<string, unknown> = {}, payload: Buffer = Buffer.alloc(0)): Promise<T> {
    const socket = connect(path);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`the store channel at ${path} did not answer ${name} within ${timeoutMs / 1000} s`)));
    try {
      await once(socket, 'connect');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ECONNREFUSED') throw new StoreChannelAbsentError(`nothing answers at ${path}`, { cause: err });
      throw err;
    }
    socket.write(`${JSON.stringify({ call: name, args, bytes: payload.length })}\n`);
    socket.end(payload);
    const parts: Buffer[] = [];
    for await (const chunk of socket) parts.push(chunk as Buffer);
    const text = Buffer.concat(parts).toString('utf8');
    if (text === '') throw new Error(`the store channel at ${path} closed without answering ${name}`);
    const answer = JSON.parse(text) as Answer;
    if (!answer.ok) throw new StoreChannelError(answer.error.name, answer.error.message);
    return answer.value as T;
  }
  return {
    call,
    rows: <T>(query: string, params: Record<string, unknown> = {}) => call<T[]>('rows', { query, params }),
    insert: async (table, rows, dedupToken) => void (await call('insert', { table, rows, dedupToken })),
  };
}

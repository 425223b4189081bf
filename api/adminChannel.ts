// The local admin channel: `npm run keys` reaches the KeyStore of the running service through a
// Unix domain socket in MDS_DATA_DIR (chDB lets one process open the store, so the CLI cannot).
// Only the socket's owner may connect (mode 0600): the machine's operator, as the data itself.
// Protocol: one JSON request line per connection, one JSON answer line back.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../infra/log.ts';
import { serveOwnerOnly, SocketTakenError } from '../infra/ownerSocket.ts';
import { redactCredentials } from '../infra/redact.ts';
import { keyPrefixLength, type ApiKeyInfo, type KeyAdmin } from './keys.ts';

/** `<MDS_DATA_DIR>/admin.sock` */
export function adminSocketPath(dataDir: string): string {
  return resolve(dataDir, 'admin.sock');
}

const requestSchema = z.discriminatedUnion('command', [
  z.object({ command: z.literal('create'), name: z.string().trim().min(1).max(200) }),
  z.object({ command: z.literal('list') }),
  z.object({ command: z.literal('revoke'), prefix: z.string().min(1).max(100), all: z.boolean().optional() }),
]);
type AdminRequest = z.infer<typeof requestSchema>;

type AdminAnswer =
  | { ok: true; key: string; prefix: string }
  | { ok: true; keys: ApiKeyInfo[] }
  | { ok: true; revoked: number }
  | { ok: false; error: string };

/** A request line longer than this is refused (a request is a few dozen bytes). */
const maxRequestBytes = 4096;
/** How long a client may take to send its request line. */
const requestTimeoutMs = 10_000;

/** Nothing answers on the socket: no service runs, or it runs without the channel. Nothing was sent. */
export class AdminChannelAbsentError extends Error {
  override name = 'AdminChannelAbsentError';
}

/** The service answered the request with an error (its message says what to do). */
export class AdminRefusedError extends Error {
  override name = 'AdminRefusedError';
}

/** The socket path holds something this process must not replace: a live channel, or not a socket. */
export const AdminSocketTakenError = SocketTakenError;

export interface AdminChannel {
  readonly path: string;
  /** Stops accepting requests and removes the socket. */
  close(): Promise<void>;
}

async function answer(keys: KeyAdmin, request: AdminRequest, log: Logger): Promise<AdminAnswer> {
  switch (request.command) {
    case 'create': {
      const made = await keys.create(request.name);
      // The prefix only: the key goes to the operator's terminal, never to the log.
      log.info({ prefix: made.prefix, name: request.name }, 'API key created through the admin channel');
      return { ok: true, ...made };
    }
    case 'list':
      return { ok: true, keys: await keys.list() };
    case 'revoke': {
      const revoked = await keys.revoke(request.prefix, { all: request.all });
      // Cut to a prefix's length: an operator who pasted a whole key must not find it in the log.
      log.info({ prefix: request.prefix.slice(0, keyPrefixLength), revoked }, 'API keys revoked through the admin channel');
      return { ok: true, revoked };
    }
  }
}

function serve(socket: Socket, keys: KeyAdmin, log: Logger): void {
  let buffered = '';
  let requested = false;
  const reply = (body: AdminAnswer) => socket.end(`${JSON.stringify(body)}\n`);
  // A client gone, or silent, before its request line: nothing to answer, and close() must not wait for it.
  const drop = () => requested || socket.destroy();
  socket.setEncoding('utf8');
  socket.setTimeout(requestTimeoutMs, drop);
  socket.on('end', drop);
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    const end = buffered.indexOf('\n');
    if (end < 0 && buffered.length <= maxRequestBytes) return;
    requested = true;
    socket.removeAllListeners('data');
    if (end < 0) return reply({ ok: false, error: 'request too long' });
    let request: AdminRequest;
    try {
      request = requestSchema.parse(JSON.parse(buffered.slice(0, end)));
    } catch {
      return reply({ ok: false, error: 'bad request: expected {"command":"create","name":...}, {"command":"list"} or {"command":"revoke","prefix":...}' });
    }
    answer(keys, request, log).then(reply, (err: unknown) => {
      log.error({ err, command: request.command }, 'admin channel request failed');
      reply({ ok: false, error: redactCredentials(err instanceof Error ? err.message : String(err)) });
    });
  });
}

/**
 * Serves `keys` on a Unix socket at `path`, readable and writable by its owner only. The socket is
 * made in a private directory and renamed into place, so it is never reachable with a wider mode,
 * and a stale one (left by a process that died) is replaced in the same step. Throws
 * AdminSocketTakenError when a live channel answers there, or the path is not a socket.
 */
export async function serveAdminChannel(path: string, keys: KeyAdmin, log: Logger): Promise<AdminChannel> {
  return serveOwnerOnly(path, 'admin channel', (socket) => serve(socket, keys, log));
}

/**
 * `npm run keys` through the channel at `path`: the same operations as a KeyStore, applied in the
 * running service. A call throws AdminChannelAbsentError when nothing answers there (before
 * anything was sent, so the caller may do it on the store instead).
 */
export function adminChannelClient(path: string, timeoutMs = 60_000): KeyAdmin {
  const ask = async (request: AdminRequest): Promise<AdminAnswer & { ok: true }> => {
    const socket = connect(path);
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`the admin channel at ${path} did not answer within ${timeoutMs} ms`)));
    try {
      await once(socket, 'connect');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ECONNREFUSED') throw new AdminChannelAbsentError(`nothing answers at ${path}`, { cause: err });
      throw err;
    }
    socket.setEncoding('utf8');
    socket.end(`${JSON.stringify(request)}\n`);
    let text = '';
    for await (const chunk of socket) text += chunk as string;
    const body = JSON.parse(text) as AdminAnswer;
    if (!body.ok) throw new AdminRefusedError(`the service refused: ${body.error}`);
    return body;
  };
  return {
    async create(name) {
      const body = await ask({ command: 'create', name });
      if (!('key' in body)) throw new Error('the admin channel answered create without a key');
      return { key: body.key, prefix: body.prefix };
    },
    async list() {
      const body = await ask({ command: 'list' });
      if (!('keys' in body)) throw new Error('the admin channel answered list without keys');
      return body.keys;
    },
    async revoke(prefix, options = {}) {
      const body = await ask({ command: 'revoke', prefix, all: options.all });
      if (!('revoked' in body)) throw new Error('the admin channel answered revoke without a count');
      return body.revoked;
    },
  };
}

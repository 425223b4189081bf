// A Unix domain socket only its owner may connect to (mode 0600), for the local channels of a
// process that holds the embedded store (api/adminChannel.ts, infra/storeChannel.ts): the machine's
// operator, as the data itself.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, lstatSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join, resolve } from 'node:path';

/** The socket path holds something this process must not replace: a live channel, or not a socket. */
export class SocketTakenError extends Error {
  override name = 'SocketTakenError';
}

/** Whether a process answers on the socket at `path`. */
export async function answers(path: string): Promise<boolean> {
  const socket = connect(path);
  try {
    await once(socket, 'connect');
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

/**
 * Makes `server` listen at `path`, readable and writable by its owner only. The socket is made in a
 * private directory and renamed into place, so it is never reachable with a wider mode, and a
 * stale one (left by a process that died) is replaced in the same step. Throws SocketTakenError
 * (with `what` in its message) when a live channel answers there, or the path is not a socket.
 */
export async function listenOwnerOnly(server: Server, path: string, what: string): Promise<void> {
  const existing = lstatSync(path, { throwIfNoEntry: false });
  if (existing && !existing.isSocket()) throw new SocketTakenError(`${path} exists and is not a socket; move it away`);
  if (existing && (await answers(path))) throw new SocketTakenError(`another process serves the ${what} at ${path}`);
  const privateDir = join(resolve(path, '..'), `.sock-${randomBytes(6).toString('hex')}`);
  mkdirSync(privateDir, { mode: 0o700 });
  try {
    const bound = join(privateDir, 's');
    server.listen(bound);
    await once(server, 'listening');
    chmodSync(bound, 0o600);
    renameSync(bound, path);
  } catch (err) {
    server.close();
    throw err;
  } finally {
    rmSync(privateDir, { recursive: true, force: true });
  }
}

/** A channel served on an owner-only socket. */
export interface OwnerSocketServer {
  readonly path: string;
  /** Stops accepting connections and removes the socket. */
  close(): Promise<void>;
}

/**
 * Serves `onConnection` at `path` (listenOwnerOnly). Half-open: a client ends its side after its
 * request and still reads the answer.
 */
export async function serveOwnerOnly(path: string, what: string, onConnection: (socket: Socket) => void): Promise<OwnerSocketServer> {
  const server: Server = createServer({ allowHalfOpen: true }, onConnection);
  await listenOwnerOnly(server, path, what);
  return {
    path,
    async close() {
      await new Promise<void>((done) => server.close(() => done()));
      rmSync(path, { force: true });
    },
  };
}

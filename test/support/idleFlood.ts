// A client that holds idle TCP connections to a port, as an attacker with nothing but sockets does
// (issue #29, finding 1): it opens `count` connections from 127.0.0.2 and up (other hosts to the
// service, which counts loopback apart), sends nothing, and opens each one again 5 s after the
// server closed it, until `ms` have passed. It prints one JSON line of counts and exits.
//   node test/support/idleFlood.ts <port> <count> <ms> [first address octet, default 2]
import { connect, type Socket } from 'node:net';
import { pathToFileURL } from 'node:url';

export interface FloodCounts {
  /** Connections made (first and again). */
  opened: number;
  /** Connections the server ended or refused. */
  closed: number;
  /** Connection attempts that failed on this side (EMFILE, EADDRNOTAVAIL...), by code. */
  errors: Record<string, number>;
}

/** Addresses per flood: the per-address cap is met by each, the total cap by all. */
const addresses = 20;

export async function flood(port: number, count: number, ms: number, firstOctet = 2): Promise<FloodCounts> {
  const counts: FloodCounts = { opened: 0, closed: 0, errors: {} };
  const until = Date.now() + ms;
  const sockets = new Set<Socket>();
  const open = (i: number) => {
    if (Date.now() >= until) return;
    const socket = connect({ port, host: '127.0.0.1', localAddress: `127.0.0.${firstOctet + (i % addresses)}` });
    sockets.add(socket);
    socket.on('connect', () => void (counts.opened += 1));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? 'unknown';
      // A reset is the server closing a refused connection: counted as closed below.
      if (code !== 'ECONNRESET' && code !== 'EPIPE') counts.errors[code] = (counts.errors[code] ?? 0) + 1;
    });
    socket.on('close', () => {
      sockets.delete(socket);
      counts.closed += 1;
      setTimeout(() => open(i), 5_000).unref();
    });
  };
  for (let i = 0; i < count; i++) open(i);
  await new Promise((r) => setTimeout(r, ms));
  for (const socket of sockets) socket.destroy();
  return counts;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [port, count, ms, firstOctet] = process.argv.slice(2).map(Number);
  if (!port || !count || !ms) {
    console.error('usage: node test/support/idleFlood.ts <port> <count> <ms> [first address octet]');
    process.exit(2);
  }
  console.log(JSON.stringify(await flood(port, count, ms, firstOctet || 2)));
}

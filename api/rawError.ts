import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiError } from './errors.ts';

/**
 * Writes a whole error response on a raw socket and closes it, for requests Express never sees
 * (rejected by Node's HTTP parser, or WebSocket upgrades): the same body and request id as any
 * other error.
 */
export function writeRawError(socket: Duplex, error: ApiError): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify(error.body());
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${randomUUID()}`,
    'Access-Control-Allow-Origin: *',
    'Connection: close',
    ...Object.entries(error.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

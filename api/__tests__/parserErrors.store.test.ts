// Requests that Node's HTTP parser refuses before Express sees them still get the error body and a
// request id (and CONNECT gets an answer at all), sent over a raw socket so any byte can be tried.
import net from 'node:net';
import { expect, test } from 'vitest';
import { useTestApi } from '../../test/support/apiHarness.ts';

const api = useTestApi({});

/** Sends raw bytes and reads until the server closes: status, headers, body. */
function raw(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(api.server.port, '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    setTimeout(() => socket.destroy(new Error('no answer in 5 s')), 5_000);
  });
}

const ids = Array.from({ length: 2_000 }, (_, i) => `coin-number-${i}`).join(',');

test.each([
  ['a 10,000-character id list (request line over the header limit)', `GET /v1/prices?ids=${ids} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, /exceed 16 KiB/],
  ['a 20 kB header', `GET /v1/global HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, /exceed 16 KiB/],
  ['a header value with a control character', `GET /v1/global HTTP/1.1\r\nHost: x\r\nx-request-id: a\u0001b\r\n\r\n`, 400, /malformed/],
  ['a lower-case method', `get /v1/global HTTP/1.1\r\nHost: x\r\n\r\n`, 400, /malformed/],
  ['CONNECT', `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`, 405, /CONNECT is not supported/],
  // Node's own answer was an empty 417.
  ['an expectation other than 100-continue', `GET /v1/global HTTP/1.1\r\nHost: x\r\nExpect: 999-x\r\n\r\n`, 417, /Expect: 999-x is not supported/],
])('%s: the status, the error body and a request id', async (_name, request, status, message) => {
  const res = await raw(request);
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  const body = JSON.parse(res.body) as { error: { code: string; message: string; status: number } };
  expect(body.error.status).toBe(status);
  expect(body.error.code).toBe(status === 405 ? 'method_not_allowed' : 'bad_request');
  expect(body.error.message).toMatch(message);
});

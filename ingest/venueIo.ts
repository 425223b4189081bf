// The network access a venue's descriptor may use (VenueIo): REST calls and one-off websocket
// requests, each with a timeout. The native collector hands this to the venues and fetches its
// REST book snapshots through it.
import WebSocket from 'ws';
import type { VenueIo } from './venue.ts';

const requestTimeoutMs = 10_000;
const wsAnswerTimeoutMs = 15_000;

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(requestTimeoutMs) });
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.json();
}

async function postJson(url: string, body: unknown = {}): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(requestTimeoutMs) });
  if (!res.ok) throw new Error(`POST ${url}: HTTP ${res.status}`);
  return res.json();
}

function wsRequest<T>(url: string, messages: readonly string[], pick: (message: unknown) => T | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const socket = new WebSocket(url, { handshakeTimeout: requestTimeoutMs });
    const timer = setTimeout(() => finish(new Error(`${url}: no answer within ${wsAnswerTimeoutMs / 1000} s`)), wsAnswerTimeoutMs);
    const finish = (outcome: Error | { value: T }) => {
      clearTimeout(timer);
      socket.removeAllListeners('message');
      socket.on('error', () => {});
      socket.terminate();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome.value);
    };
    socket.on('open', () => messages.forEach((m) => socket.send(m)));
    socket.on('message', (data) => {
      let value: T | undefined;
      try {
        value = pick(JSON.parse(data.toString()));
      } catch {
        return;
      }
      if (value !== undefined) finish({ value });
    });
    socket.on('error', (err) => finish(err));
    socket.on('close', () => finish(new Error(`${url}: closed before answering`)));
  });
}

export const venueIo: VenueIo = { getJson, postJson, wsRequest };

// GET /v1/stream against the running API (chDB store, in-process bus) with a real WebSocket client.
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { createConnection } from 'node:net';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { get, silentLog, trade } from '../../test/support/harness.ts';
import { until, untilValue } from '../../test/support/until.ts';
import { KeyStore } from '../keys.ts';
import { StreamTokens, streamTokenTtlMs } from '../stream/streamTokens.ts';
import { busTrades } from '../stream/tradeFeed.ts';

type Message = Record<string, unknown> & { op?: string; channel?: string; data?: Record<string, unknown>[] };

/** A stream client that keeps every message it receives, to wait on. */
class Client {
  readonly ws: WebSocket;
  readonly received: Message[] = [];
  closed: { code: number; reason: string } | undefined;

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => this.received.push(JSON.parse(data.toString()) as Message));
    ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The first message from `from` on that matches; its index is where to look from next. */
  next(match: (m: Message) => boolean, what: string, from = 0, timeoutMs = 5_000): Promise<{ message: Message; index: number }> {
    return untilValue(
      () => {
        const index = this.received.findIndex((m, i) => i >= from && match(m));
        return index >= 0 ? { message: this.received[index]!, index } : undefined;
      },
      what,
      { timeoutMs, everyMs: 10, context: () => `received ${JSON.stringify(this.received.slice(from)).slice(0, 800)}` },
    );
  }

  /** Sends an op and waits for its reply (the replies to ops keep their order). */
  async request(message: unknown): Promise<Message> {
    const from = this.received.length;
    this.send(message);
    return (await this.next((m) => m.op !== undefined, 'reply', from)).message;
  }
}

const isData = (m: Message, channel: string) => m.channel === channel;

/** Opens a connection; rejects with the HTTP status and error body of a refused upgrade. */
async function connect(url: string, headers: Record<string, string> = {}, query = ''): Promise<Client> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream${query}`, { headers });
  const client = new Client(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body) as unknown })));
    });
    ws.once('error', reject);
  });
  return client;
}

/** An upgrade request with a valid key but no Sec-WebSocket-Key; resolves with the raw answer. */
async function malformedUpgrade(key: string): Promise<string> {
  const socket = createConnection(api.server.port, '127.0.0.1');
  socket.write(`GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nx-api-key: ${key}\r\n\r\n`);
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  await once(socket, 'close');
  return answer;
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; body: { error: { code: string; message: string } } }> {
  const err = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as { status: number; body: { error: { code: string; message: string } } } | undefined;
  if (!err?.status) throw new Error(`expected a refused upgrade, got ${String(err)}`);
  return err;
}

const nowS = () => Math.floor(Date.now() / 1000);
/** An index row as the index runner writes it (the columns of migration 0103). */
const tick = (asset: string, second: number, price: number) => ({
  asset, second, price, status: 'ok', constituents: [`binance:${asset}`], excluded: {},
  volume: 1, volume_usd: price, trade_count: 1, last_trade_at: second * 1000, computed_at: Date.now(),
});

let tradeSeq = 0;
function busTrade(asset: string, price: number, fields: Partial<TradeEvent> = {}): TradeEvent {
  const ts = Date.now();
  return { type: 'trade', venue: 'binance', market: `${asset.toUpperCase()}USDT`, asset, quote: 'USDT', tradeId: `t${++tradeSeq}`, price, quantity: 0.5, side: 'sell', ts, receivedAt: ts, ...fields };
}

const bus = createMemoryBus();
// Registered first, so it runs last: after the API has stopped reading the bus.
afterAll(() => bus.close());
const logLines: string[] = [];
const api = useTestApi({
  keyName: 'stream',
  env: {
    QUOTA_PER_HOUR: '1000',
    STREAM_MAX_CONNECTIONS_PER_KEY: '3',
    STREAM_MAX_SUBSCRIPTIONS_PER_CONNECTION: '4',
    STREAM_MAX_BUFFERED_BYTES: '65536',
  },
  // The API's warnings are kept: the slow-consumer test waits for the drop's line.
  log: pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) }),
  trades: busTrades(bus),
  keyStore: { refreshMs: 200 },
});

const clients: Client[] = [];
async function open(headers: Record<string, string> = { 'x-api-key': api.key }, query = ''): Promise<Client> {
  const client = await connect(api.url, headers, query);
  clients.push(client);
  return client;
}
/**
 * Closes this file's connections. The server frees their slots a moment after the clients see the
 * close: the test that counts connections per key does so on a key of its own.
 */
async function closeAll(): Promise<void> {
  for (const c of clients.splice(0)) {
    if (c.closed) continue;
    c.ws.close();
    await once(c.ws, 'close');
  }
}

afterEach(closeAll);

describe('prices', () => {
  test('sends the subscribed prices as /v1/prices has them, a change within 2 s, and nothing after unsubscribe', async () => {
    const s = nowS() - 3;
    await api.store.insert('index_ticks', [tick('bitcoin', s - 60, 99_000), tick('bitcoin', s, 100_000), tick('ethereum', s, 4_000), tick('solana', s, 200)]);
    const client = await open();
    expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['bitcoin', 'ethereum'] })).toEqual({ op: 'subscribed', request: { channel: 'prices', ids: ['bitcoin', 'ethereum'] }, subscriptions: 2 });
    const first = (await client.next((m) => isData(m, 'prices'), 'first prices')).message;
    // The entries of spec 2.5 with the numbers inserted above; the same as the REST endpoint's.
    expect(first.data!.map((e) => [e.assetId, e.price, e.measured, e.updatedAt])).toEqual([
      ['bitcoin', 100_000, true, s * 1000],
      ['ethereum', 4_000, true, s * 1000],
    ]);
    expect(first.data![0]!.change24h).toBeCloseTo((100_000 / 99_000 - 1) * 100, 9);
    const rest = await api.get('/v1/prices?ids=bitcoin,ethereum');
    expect((rest.json as { prices: unknown[] }).prices).toEqual(first.data);

    // A new index second of bitcoin only: one message, within 2 s, with bitcoin alone.
    const from = client.received.length;
    const changedAt = Date.now();
    await api.store.insert('index_ticks', [tick('bitcoin', s + 1, 100_500)]);
    const changed = await client.next((m) => isData(m, 'prices'), 'changed price', from, 2_000);
    expect(Date.now() - changedAt).toBeLessThan(2_000);
    expect(changed.message.data!.map((e) => [e.assetId, e.price])).toEqual([['bitcoin', 100_500]]);

    expect(await client.request({ op: 'unsubscribe', channel: 'prices', ids: ['bitcoin'] })).toMatchObject({ op: 'unsubscribed', subscriptions: 1 });
    const afterUnsubscribe = client.received.length;
    await api.store.insert('index_ticks', [tick('bitcoin', s + 2, 101_000), tick('ethereum', s + 2, 4_100)]);
    // Ethereum's change arrives; bitcoin's never does.
    const later = await client.next((m) => isData(m, 'prices'), 'ethereum change', afterUnsubscribe, 3_000);
    expect(later.message.data!.map((e) => [e.assetId, e.price])).toEqual([['ethereum', 4_100]]);
    // A later poll: a new ethereum second arrives; bitcoin's change was not sent in between either.
    await api.store.insert('index_ticks', [tick('ethereum', s + 3, 4_200)]);
    await client.next((m) => isData(m, 'prices') && m.data!.some((e) => e.price === 4_200), 'a later poll', later.index + 1, 3_000);
    const bitcoinAgain = client.received.slice(afterUnsubscribe).flatMap((m) => (isData(m, 'prices') ? m.data! : [])).filter((e) => e.assetId === 'bitcoin');
    expect(bitcoinAgain).toEqual([]);
  });

  test('a client that unsubscribes and subscribes again gets the current price of a quiet asset, without waiting for it to move', async () => {
    // cardano: one index second and no later one (no other test writes cardano's).
    const s = nowS() - 3;
    await api.store.insert('index_ticks', [tick('cardano', s, 0.375)]);
    const client = await open();
    expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['cardano'] })).toMatchObject({ op: 'subscribed', subscriptions: 1 });
    const first = await client.next((m) => isData(m, 'prices'), 'the first price');
    expect(first.message.data!.map((e) => [e.assetId, e.price])).toEqual([['cardano', 0.375]]);

    expect(await client.request({ op: 'unsubscribe', channel: 'prices', ids: ['cardano'] })).toMatchObject({ op: 'unsubscribed', subscriptions: 0 });
    const resubscribedAt = client.received.length;
    expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['cardano'] })).toMatchObject({ op: 'subscribed', subscriptions: 1 });
    // The price has not moved, and the new subscription still gets it, from the next poll (every second).
    const again = await client.next((m) => isData(m, 'prices'), 'the price after subscribing again', resubscribedAt, 3_000);
    expect(again.message.data!.map((e) => [e.assetId, e.price, e.updatedAt])).toEqual([['cardano', 0.375, s * 1000]]);
  });
});

describe('trades and candles', () => {
  test('every trade of a subscribed asset, with venue, price, quantity, side and time; none of the others', async () => {
    const client = await open();
    await client.request({ op: 'subscribe', channel: 'trades', ids: ['bitcoin'] });
    const mine = [busTrade('bitcoin', 100_001, { side: 'buy' }), busTrade('bitcoin', 100_002, { venue: 'okx', market: 'BTC-USDT' })];
    bus.publish([busTrade('ethereum', 4_000), mine[0]!, busTrade('solana', 200), mine[1]!]);
    const got: Record<string, unknown>[] = [];
    let from = 0;
    while (got.length < 2) {
      const next = await client.next((m) => isData(m, 'trades'), 'trades', from);
      got.push(...next.message.data!);
      from = next.index + 1;
    }
    expect(got).toEqual(
      mine.map((t) => ({ assetId: 'bitcoin', venue: t.venue, market: t.market, quote: 'USDT', price: t.price, quantity: 0.5, side: t.side, time: t.ts, tradeId: t.tradeId })),
    );
  });

  test('the current candle of a subscribed asset and interval is the last candle /v1/coins/{id}/ohlc returns, and follows a new trade', async () => {
    const hourMs = 3_600_000;
    // Away from an hour's end, so that the stream and the REST call see the same current hour.
    await until(() => Date.now() % hourMs <= hourMs - 5_000, 'the clock to leave the last 5 s of the hour', { timeoutMs: 6_000 });
    const hour = Math.floor(Date.now() / hourMs) * hourMs;
    // Two trades in the current hour (a USD and a USDT market), one in the hour before.
    const at = (ms: number) => Math.min(Date.now(), hour + ms);
    await api.store.insert('trades', [
      trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: 'c1', ts: hour - 30_000, price: 3_900, quantity: 1 }),
      trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: 'c2', ts: at(1), price: 3_950, quantity: 2 }),
      trade({ venue: 'coinbase', market: 'ETH-USD', asset: 'ethereum', quote: 'USD', trade_id: 'c3', ts: at(2), price: 3_970, quantity: 1 }),
    ]);
    const client = await open();
    await client.request({ op: 'subscribe', channel: 'candles', ids: ['ethereum'], interval: '1h' });
    const { message, index } = await client.next((m) => isData(m, 'candles'), 'candle');
    const ohlc = await api.get('/v1/coins/ethereum/ohlc?interval=1h');
    const last = (ohlc.json as { candles: unknown[] }).candles.at(-1);
    expect(message).toEqual({ channel: 'candles', interval: '1h', data: [{ assetId: 'ethereum', ...(last as object) }] });
    // Computed from the trades above, not from the code under test.
    expect(last).toEqual({ timestamp: hour, open: 3_950, high: 3_970, low: 3_950, close: 3_970, volume: 3 });

    await api.store.insert('trades', [trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: 'c4', ts: Date.now(), price: 4_010, quantity: 0.25 })]);
    const next = await client.next((m) => isData(m, 'candles'), 'updated candle', index + 1, 3_000);
    expect(next.message.data).toEqual([{ assetId: 'ethereum', timestamp: hour, open: 3_950, high: 4_010, low: 3_950, close: 4_010, volume: 3.25 }]);
  });
});

describe('requests and limits', () => {
  test('a bad message gets an error naming what is wrong, and the connection stays open', async () => {
    const client = await open();
    const cases: [unknown, RegExp][] = [
      ['{not json', /not JSON/],
      [[1, 2], /JSON object/],
      [{ op: 'listen' }, /unknown op "listen"/],
      [{ op: 'subscribe', channel: 'books', ids: ['bitcoin'] }, /unknown channel "books"/],
      [{ op: 'subscribe', channel: 'prices', ids: ['bitcoin', 'not-a-coin'] }, /unknown asset ids "not-a-coin"/],
      [{ op: 'subscribe', channel: 'prices', ids: [] }, /ids must be a list/],
      [{ op: 'subscribe', channel: 'candles', ids: ['bitcoin'] }, /candles need an interval/],
      [{ op: 'subscribe', channel: 'prices', ids: ['bitcoin'], interval: '1m' }, /only candles take an interval/],
    ];
    for (const [message, expected] of cases) {
      const reply = await client.request(typeof message === 'string' ? message : JSON.stringify(message));
      expect(reply).toMatchObject({ op: 'error', error: { code: 'bad_request', status: 400 } });
      expect((reply.error as { message: string }).message).toMatch(expected);
    }
    // Nothing above subscribed anything, and the connection still answers.
    expect(await client.request({ op: 'ping' })).toMatchObject({ op: 'pong' });
    expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['bitcoin'] })).toMatchObject({ op: 'subscribed', subscriptions: 1 });
  });

  test('subscriptions per connection and connections per key are limited', async () => {
    // A key of its own (made through the API's KeyStore, so it applies at once): no slot of it is
    // still held by an earlier test's connection that the server has not yet seen close.
    const own = { 'x-api-key': (await api.server.keys.create('stream-limits')).key };
    const a = await open(own);
    expect(await a.request({ op: 'subscribe', channel: 'candles', ids: ['bitcoin', 'ethereum'], interval: '1h' })).toMatchObject({ subscriptions: 2 });
    // 2 + 3 > 4: refused whole; the same subscriptions again add nothing.
    const refused = await a.request({ op: 'subscribe', channel: 'trades', ids: ['bitcoin', 'ethereum', 'solana'] });
    expect(refused).toMatchObject({ op: 'error', error: { code: 'bad_request' } });
    expect((refused.error as { message: string }).message).toMatch(/at most 4 subscriptions/);
    expect(await a.request({ op: 'subscribe', channel: 'candles', ids: ['bitcoin'], interval: '1h' })).toMatchObject({ subscriptions: 2 });
    expect(await a.request({ op: 'subscribe', channel: 'trades', ids: ['bitcoin', 'ethereum'] })).toMatchObject({ subscriptions: 4 });

    // Handshakes that ws itself refuses (no Sec-WebSocket-Key) hold no slot once answered.
    for (let i = 0; i < 3; i++) expect(await malformedUpgrade(own['x-api-key'])).toMatch(/^HTTP\/1.1 400/);
    await open(own);
    await open(own);
    const fourth = await refusal(connect(api.url, own));
    expect(fourth.status).toBe(429);
    expect(fourth.body.error).toMatchObject({ code: 'quota_exceeded' });
    expect(fourth.body.error.message).toMatch(/at most 3 stream connections/);
    // A closed connection gives its slot back, once the server has seen it close.
    a.ws.close();
    await once(a.ws, 'close');
    await untilValue(() => open(own).catch(() => undefined), 'a connection in the slot the closed one gave back', { everyMs: 20, timeoutMs: 5_000 });
  });

  test('opening a connection and each subscribe count against the hourly quota', async () => {
    const small = await api.serve({ env: { QUOTA_PER_HOUR: '3' }, trades: busTrades(bus) });
    try {
      const client = await connect(small.url, { 'x-api-key': api.key }); // 1
      expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['bitcoin'] })).toMatchObject({ op: 'subscribed' }); // 2
      expect(await client.request({ op: 'unsubscribe', channel: 'prices', ids: ['bitcoin'] })).toMatchObject({ op: 'unsubscribed' }); // free
      expect(await client.request({ op: 'subscribe', channel: 'trades', ids: ['bitcoin'] })).toMatchObject({ op: 'subscribed' }); // 3
      expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['bitcoin'] })).toMatchObject({ op: 'error', error: { code: 'quota_exceeded', status: 429 } });
      const refused = await refusal(connect(small.url, { 'x-api-key': api.key }));
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('quota_exceeded');
      // The REST API shares the count.
      expect((await get(`${small.url}/v1/prices`, { 'x-api-key': api.key })).status).toBe(429);
      client.ws.close();
      await once(client.ws, 'close');
    } finally {
      await small.close();
    }
  });

  test('a subscribe naming only what the connection holds is answered as before and costs no request of the quota', async () => {
    const small = await api.serve({ env: { QUOTA_PER_HOUR: '10' }, trades: busTrades(bus) });
    /** What a REST request (itself one request) finds left of the key's quota. */
    const remaining = async () => Number((await get(`${small.url}/v1/prices?ids=bitcoin`, { 'x-api-key': api.key })).headers.get('x-ratelimit-remaining'));
    try {
      const client = await connect(small.url, { 'x-api-key': api.key }); // 1
      expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['bitcoin', 'ethereum'] })).toMatchObject({ op: 'subscribed', subscriptions: 2 }); // 2
      expect(await remaining()).toBe(10 - 3);
      // The same subscriptions again, a part of them, and in another order: nothing changes.
      for (const ids of [['bitcoin', 'ethereum'], ['ethereum'], ['ethereum', 'bitcoin']]) {
        expect(await client.request({ op: 'subscribe', channel: 'prices', ids })).toEqual({ op: 'subscribed', request: { channel: 'prices', ids }, subscriptions: 2 });
      }
      expect(await remaining()).toBe(10 - 4);
      // One that adds anything is counted as before, even when it also names what is held.
      expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['bitcoin', 'solana'] })).toMatchObject({ op: 'subscribed', subscriptions: 3 }); // 5
      // The same asset on another channel is another subscription.
      expect(await client.request({ op: 'subscribe', channel: 'trades', ids: ['bitcoin'] })).toMatchObject({ op: 'subscribed', subscriptions: 4 }); // 6
      expect(await remaining()).toBe(10 - 7);
      client.ws.close();
      await once(client.ws, 'close');
    } finally {
      await small.close();
    }
  });

  test('a client that stops reading is closed with 4008 instead of being buffered without bound', async () => {
    const slow = await open();
    const healthy = await open();
    for (const c of [slow, healthy]) await c.request({ op: 'subscribe', channel: 'trades', ids: ['bitcoin'] });
    // The client's socket stops reading: the kernel buffers fill, then the server's.
    (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const dropped = () => logLines.some((l) => l.includes('reads too slowly'));
    // Trades until the server drops the slow client: 500 more at each poll.
    const publishUntilDropped = () => {
      if (dropped()) return true;
      bus.publish(Array.from({ length: 500 }, () => busTrade('bitcoin', 100_000, { market: 'BTCUSDT'.padEnd(200, 'X') })));
      return false;
    };
    await until(publishUntilDropped, 'the slow client to be dropped', { timeoutMs: 20_000, everyMs: 5 });
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    if (!slow.closed) await once(slow.ws, 'close');
    expect(slow.closed).toEqual({ code: 4008, reason: 'slow consumer: more than 65536 bytes unsent' });
    // The other client was not affected.
    expect(healthy.closed).toBeUndefined();
    expect(await healthy.request({ op: 'ping' })).toMatchObject({ op: 'pong' });
    await closeAll();
  }, 30_000);
});

describe('authentication', () => {
  test('the upgrade needs a key, by header or bearer', async () => {
    expect((await refusal(connect(api.url, {}))).body.error.code).toBe('missing_key');
    expect((await refusal(connect(api.url, { 'x-api-key': 'mds_not-a-key-at-all' }))).status).toBe(401);
    const bearer = await open({ authorization: `Bearer ${api.key}` });
    expect(await bearer.request({ op: 'ping' })).toMatchObject({ op: 'pong' });
    expect((await api.get('/v1/stream')).status).toBe(426);
  });

  test('a browser connects with a short-lived token from POST /v1/stream/token', async () => {
    const before = Date.now();
    const res = await fetch(`${api.url}/v1/stream/token`, { method: 'POST', headers: { 'x-api-key': api.key } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { token, expiresAt } = (await res.json()) as { token: string; expiresAt: number };
    expect(expiresAt).toBeGreaterThanOrEqual(before + streamTokenTtlMs);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + streamTokenTtlMs);
    expect(token).not.toContain(api.key);

    const client = await open({}, `?token=${encodeURIComponent(token)}`);
    expect(await client.request({ op: 'subscribe', channel: 'prices', ids: ['bitcoin'] })).toMatchObject({ op: 'subscribed' });

    expect((await fetch(`${api.url}/v1/stream/token`, { method: 'POST' })).status).toBe(401);
    const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await refusal(connect(api.url, {}, `?token=${tampered}`))).body.error.code).toBe('invalid_key');
    // Signed with the same secret, but expired.
    const keys = new KeyStore(api.store);
    await keys.start(silentLog);
    const verified = keys.verify(api.key)!;
    const expired = new StreamTokens(keys).issue(verified, Date.now() - streamTokenTtlMs - 1_000);
    expect((await refusal(connect(api.url, {}, `?token=${expired.token}`))).status).toBe(401);
    // A token of a key revoked since is refused (the API reloads its keys every 200 ms here).
    const other = await keys.create('revoked-later');
    const tokenOf = (key: string) => fetch(`${api.url}/v1/stream/token`, { method: 'POST', headers: { 'x-api-key': key } });
    // Once the API has reloaded its keys, it knows the new one.
    const { token: otherToken } = await untilValue(
      async () => {
        const res = await tokenOf(other.key);
        return res.status === 200 ? ((await res.json()) as { token: string }) : undefined;
      },
      'a token for the key made elsewhere',
    );
    await keys.revoke(other.prefix);
    // Once it has reloaded them again, it knows of the revocation.
    await until(async () => (await tokenOf(other.key)).status === 401, 'the API to refuse the revoked key');
    expect((await refusal(connect(api.url, {}, `?token=${otherToken}`))).status).toBe(401);
    keys.close();
  });

  test('the AsyncAPI document is public', async () => {
    const res = await get(`${api.url}/v1/asyncapi.json`);
    expect(res.status).toBe(200);
    const doc = res.json as { asyncapi: string; channels: { stream: { address: string } } };
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.channels.stream.address).toBe('/v1/stream');
  });
});

import type { WebSocket } from 'ws';
import type { TradeEvent } from '../../infra/events.ts';
import type { Logger } from '../../infra/log.ts';
import type { VerifiedKey } from '../keys.ts';
import type { CandleInterval } from '../read/candleSeries.ts';
import type { PriceEntry } from '../read/prices.ts';
import { ApiError } from '../errors.ts';
import { topicKey, type ServerMessage, type StreamCandle, type StreamChannel, type StreamTopic, type StreamTrade } from './protocol.ts';

/** Close codes the stream uses besides the standard ones. */
export const closeCodes = {
  /** The client read too slowly: more than STREAM_MAX_BUFFERED_BYTES were waiting to be sent. */
  slowConsumer: 4008,
  /** The connection's API key was revoked. */
  keyRevoked: 4001,
} as const;

/** How long a dropped connection's close handshake may take before its socket is cut. */
const closeGraceMs = 10_000;

/** One client connection: its key, its subscriptions, and what it was last sent per price or candle. */
export class StreamConnection {
  readonly ws: WebSocket;
  readonly key: VerifiedKey;
  /** Keys of its subscriptions (topicKey). */
  readonly topics = new Set<string>();
  /** Per price or candle subscription, the last value sent: only a change is sent again. */
  readonly lastSent = new Map<string, string>();
  /** Answered the last ping (or sent something since). */
  alive = true;
  /** Its messages are handled one after the other, so replies keep their order. */
  queue: Promise<void> = Promise.resolve();

  constructor(ws: WebSocket, key: VerifiedKey) {
    this.ws = ws;
    this.key = key;
  }
}

/**
 * Who is subscribed to what on this replica, and the fan-out: each feed hands its data to the hub
 * once, the hub sends each connection what it subscribed to. Sending never buffers without bound:
 * a connection with more than `maxBufferedBytes` unsent is closed with 4008.
 */
export class StreamHub {
  readonly #maxBufferedBytes: number;
  readonly #log: Logger;
  readonly #connections = new Set<StreamConnection>();
  readonly #byTopic = new Map<string, { topic: StreamTopic; connections: Set<StreamConnection> }>();
  /** Open connections per key hash, counting those being opened. */
  readonly #perKey = new Map<string, number>();

  constructor(options: { maxBufferedBytes: number; log: Logger }) {
    this.#maxBufferedBytes = options.maxBufferedBytes;
    this.#log = options.log;
  }

  get connections(): ReadonlySet<StreamConnection> {
    return this.#connections;
  }

  /** Holds one of the key's `max` connection slots; false when all are taken. Give it back with `release`. */
  reserve(keyHash: string, max: number): boolean {
    const open = this.#perKey.get(keyHash) ?? 0;
    if (open >= max) return false;
    this.#perKey.set(keyHash, open + 1);
    return true;
  }

  release(keyHash: string): void {
    const open = (this.#perKey.get(keyHash) ?? 1) - 1;
    if (open > 0) this.#perKey.set(keyHash, open);
    else this.#perKey.delete(keyHash);
  }

  /** A connection opened on a slot `reserve` gave. */
  add(connection: StreamConnection): void {
    this.#connections.add(connection);
  }

  /** Forgets the connection and gives its slot back (idempotent). */
  remove(connection: StreamConnection): void {
    if (!this.#connections.delete(connection)) return;
    for (const key of connection.topics) this.#unlink(key, connection);
    connection.topics.clear();
    this.release(connection.key.keyHash);
  }

  /**
   * Adds the subscriptions, all or none: past `max` per connection it throws ApiError 400.
   * Returns how many the connection holds.
   */
  subscribe(connection: StreamConnection, topics: readonly StreamTopic[], max: number): number {
    const added = this.assertRoom(connection, topics, max);
    for (const topic of added) {
      const key = topicKey(topic);
      connection.topics.add(key);
      let entry = this.#byTopic.get(key);
      if (!entry) this.#byTopic.set(key, (entry = { topic, connections: new Set() }));
      entry.connections.add(connection);
    }
    return connection.topics.size;
  }

  /** The subscriptions of `topics` the connection does not hold yet; throws ApiError 400 when they do not fit in `max`. */
  assertRoom(connection: StreamConnection, topics: readonly StreamTopic[], max: number): StreamTopic[] {
    const added = topics.filter((t) => !connection.topics.has(topicKey(t)));
    if (connection.topics.size + added.length > max) {
      throw new ApiError(
        400,
        'bad_request',
        `a connection holds at most ${max} subscriptions (it has ${connection.topics.size}, this adds ${added.length}): unsubscribe some, or open another connection`,
      );
    }
    return added;
  }

  /** Removes the subscriptions it holds of these (others are ignored); returns how many remain. */
  unsubscribe(connection: StreamConnection, topics: readonly StreamTopic[]): number {
    for (const topic of topics) {
      const key = topicKey(topic);
      if (!connection.topics.delete(key)) continue;
      connection.lastSent.delete(key);
      this.#unlink(key, connection);
    }
    return connection.topics.size;
  }

  #unlink(key: string, connection: StreamConnection): void {
    const entry = this.#byTopic.get(key);
    entry?.connections.delete(connection);
    if (entry?.connections.size === 0) this.#byTopic.delete(key);
  }

  /** Assets with at least one subscription on the channel (and interval), for the pollers. */
  subscribedAssets(channel: StreamChannel, interval?: CandleInterval): string[] {
    const assets: string[] = [];
    for (const { topic } of this.#byTopic.values()) {
      if (topic.channel === channel && topic.interval === interval) assets.push(topic.assetId);
    }
    return assets;
  }

  /** Every trade to the connections subscribed to its asset, one message per connection per call. */
  publishTrades(events: readonly TradeEvent[]): void {
    const batches = new Map<StreamConnection, StreamTrade[]>();
    for (const e of events) {
      const subscribers = this.#byTopic.get(topicKey({ channel: 'trades', assetId: e.asset }))?.connections;
      if (!subscribers) continue;
      const trade: StreamTrade = { assetId: e.asset, venue: e.venue, market: e.market, quote: e.quote, price: e.price, quantity: e.quantity, side: e.side, time: e.ts, tradeId: e.tradeId };
      for (const connection of subscribers) {
        const batch = batches.get(connection);
        if (batch) batch.push(trade);
        else batches.set(connection, [trade]);
      }
    }
    for (const [connection, data] of batches) this.send(connection, { channel: 'trades', data });
  }

  /** The entries whose price or `measured` changed since a connection was last sent them. */
  publishPrices(entries: readonly PriceEntry[]): void {
    this.#publishChanges(
      entries.map((entry) => ({ key: topicKey({ channel: 'prices', assetId: entry.assetId }), value: entry, signature: `${entry.price}|${entry.measured}` })),
      (data) => ({ channel: 'prices', data }),
    );
  }

  /** The current candles that changed since a connection was last sent them. */
  publishCandles(interval: CandleInterval, candles: readonly StreamCandle[]): void {
    this.#publishChanges(
      candles.map((candle) => ({ key: topicKey({ channel: 'candles', assetId: candle.assetId, interval }), value: candle, signature: JSON.stringify(candle) })),
      (data) => ({ channel: 'candles', interval, data }),
    );
  }

  #publishChanges<T>(items: readonly { key: string; value: T; signature: string }[], message: (data: T[]) => ServerMessage): void {
    const batches = new Map<StreamConnection, T[]>();
    for (const { key, value, signature } of items) {
      for (const connection of this.#byTopic.get(key)?.connections ?? []) {
        if (connection.lastSent.get(key) === signature) continue;
        connection.lastSent.set(key, signature);
        const batch = batches.get(connection);
        if (batch) batch.push(value);
        else batches.set(connection, [value]);
      }
    }
    for (const [connection, data] of batches) this.send(connection, message(data));
  }

  /** Sends unless the connection is closing; a connection that stopped reading is dropped instead. */
  send(connection: StreamConnection, message: ServerMessage): void {
    const { ws } = connection;
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > this.#maxBufferedBytes) {
      this.#log.warn({ keyPrefix: connection.key.prefix, bufferedBytes: ws.bufferedAmount, maxBufferedBytes: this.#maxBufferedBytes }, 'stream client reads too slowly: closing its connection');
      this.close(connection, closeCodes.slowConsumer, `slow consumer: more than ${this.#maxBufferedBytes} bytes unsent`);
      return;
    }
    ws.send(JSON.stringify(message));
  }

  /**
   * Stops feeding the connection and closes it; its socket is cut if the close handshake has not
   * ended within closeGraceMs (a client that does not read never answers it).
   */
  close(connection: StreamConnection, code: number, reason: string): void {
    this.remove(connection);
    connection.ws.close(code, reason);
    const cut = setTimeout(() => connection.ws.terminate(), closeGraceMs).unref();
    connection.ws.once('close', () => clearTimeout(cut));
  }
}

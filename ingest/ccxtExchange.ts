// What the ccxt collector changes on a ccxt exchange instance, set before any socket exists (ccxt
// binds these per connection): the socket factory (`client`) to see every dial and redial and to
// watch its clients' sends, rejections and resolutions; `onError` and `onClose` to keep why each
// socket closed; `handleMessage` to count messages and keep a parser's surprise from failing every
// watcher. Nothing here reads market data: the collector gets callbacks.
import type { Exchange, OrderBook as CcxtOrderBook } from 'ccxt';
import type { Logger } from '../infra/log.ts';

export type Ccxt = typeof import('ccxt');

/** Counts the hooks keep, on the collector's own counters. */
export interface ExchangeCounters {
  messages: number;
  unknownMessages: number;
  lastMessageAt: number | undefined;
}

export interface ExchangeHooks {
  /** The ccxt module the exchange comes from (its error classes). */
  ccxt: Ccxt;
  log: Logger;
  counters: ExchangeCounters;
  /**
   * A socket to `url` is about to be opened: the first one, or again after it closed (`redial`, with
   * why the last one closed). Where a recovery of what was missed while it was down would start.
   */
  onDial(url: string, redial: { reason: string } | undefined): void;
  /** ccxt failed a book's sequence or checksum rule and rejects its watchers with `error` (called once per error). */
  onBookBroken(error: Error): void;
  /** ccxt settled a watcher with the order book of this unified symbol: a book that passed the venue's checks. */
  onBookSettled(symbol: string): void;
}

export interface HookedExchange {
  /** Whether every socket ever dialled is open now (false before the first). */
  connected(): boolean;
  /** Closes every socket, recording `reason` as why (the redials say so). */
  closeSockets(reason: string): Promise<void>;
}

/** Text frames that are keep-alives, not data (ccxt handles them). */
const keepAliveText = /^(ping|pong)$/i;

/** The market of a ccxt order book (what a book watcher is settled with), else undefined. */
export function bookSymbol(result: unknown): string | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const { bids, asks, symbol } = result as Partial<CcxtOrderBook>;
  return Array.isArray(bids) && Array.isArray(asks) && typeof symbol === 'string' ? symbol : undefined;
}

/** Sets the hooks on `exchange`; call once, before anything connects. */
export function hookExchange(exchange: Exchange, hooks: ExchangeHooks): HookedExchange {
  const dialed = new Set<string>();
  const closeReasons = new Map<string, string>();
  /** Sockets the collector itself closes, and why. */
  const closingByUs = new Map<string, string>();
  hookClients(exchange, hooks, (url) => {
    const redial = dialed.has(url);
    dialed.add(url);
    hooks.onDial(url, redial ? { reason: closeReasons.get(url) ?? 'unknown' } : undefined);
  });
  const onError = exchange.onError.bind(exchange);
  exchange.onError = (client: { url: string }, error: Error) => {
    closeReasons.set(client.url, error.message);
    onError(client, error);
  };
  const onClose = exchange.onClose.bind(exchange);
  exchange.onClose = (client: { url: string; error?: Error }, event: { code?: number }) => {
    const ours = closingByUs.get(client.url);
    closingByUs.delete(client.url);
    closeReasons.set(client.url, ours ?? client.error?.message ?? `closed by the venue (code ${event?.code ?? 'none'})`);
    onClose(client, event);
  };
  hookMessages(exchange, hooks);
  exchange.log = (...args: unknown[]) => hooks.log.debug({ ccxt: args.map(String).join(' ') }, 'ccxt');
  return {
    connected() {
      const open = [...dialed].filter((url) => exchange.clients?.[url]?.connection?.readyState === 1);
      return dialed.size > 0 && open.length === dialed.size;
    },
    async closeSockets(reason) {
      const clients = Object.values(exchange.clients ?? {});
      for (const c of clients) closingByUs.set(c.url, reason);
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}

/** The socket factory: `dialing(url)` before a new socket to `url`; each client's send, reject and resolve watched. */
function hookClients(exchange: Exchange, hooks: ExchangeHooks, dialing: (url: string) => void): void {
  const { ccxt } = hooks;
  const guarded = new WeakSet<object>();
  const brokenSeen = new WeakSet<object>();
  const openClient = exchange.client.bind(exchange);
  exchange.client = (url) => {
    if (url && !(exchange.clients && url in exchange.clients)) dialing(url);
    const client = openClient(url);
    if (guarded.has(client)) return client;
    guarded.add(client);
    // ccxt sends throttled subscriptions without awaiting them: one that fires after its socket closed
    // would reject unobserved and end the process. The watcher it belongs to fails on its own.
    const send = client.send.bind(client);
    client.send = (message: unknown) => {
      const sent = send(message);
      sent.catch(() => undefined);
      return sent;
    };
    const reject = client.reject.bind(client);
    client.reject = (error: unknown, messageHash?: string) => {
      if ((error instanceof ccxt.ChecksumError || error instanceof ccxt.InvalidNonce) && !brokenSeen.has(error)) {
        brokenSeen.add(error);
        hooks.onBookBroken(error);
      }
      return reject(error, messageHash);
    };
    const resolve = client.resolve.bind(client);
    client.resolve = (result: unknown, messageHash: string) => {
      const symbol = bookSymbol(result);
      if (symbol !== undefined) hooks.onBookSettled(symbol);
      return resolve(result, messageHash);
    };
    return client;
  };
}

/** Every message counted; undecoded text and what ccxt's parser trips over are unknown messages. */
function hookMessages(exchange: Exchange, hooks: ExchangeHooks): void {
  const { ccxt, counters, log } = hooks;
  const handleMessage = exchange.handleMessage.bind(exchange);
  exchange.handleMessage = (client: unknown, message: unknown) => {
    counters.messages += 1;
    counters.lastMessageAt = Date.now();
    // ccxt hands over text it could not decode as JSON unchanged; what is not a keep-alive is noise.
    const undecoded = typeof message === 'string' && !keepAliveText.test(message.trim());
    if (undecoded) counters.unknownMessages += 1;
    try {
      handleMessage(client, message);
    } catch (err) {
      // ccxt's own errors (a bad checksum, a venue error) reach the watchers; a parser tripping over
      // a message it did not expect is an unknown message, and must not reject every watcher.
      if (err instanceof ccxt.BaseError) throw err;
      if (!undecoded) counters.unknownMessages += 1;
      log.debug({ err: (err as Error).message }, 'message ccxt could not handle');
    }
  };
}

// Bitstamp's websocket API v2, trading-pairs and transactions REST over the SIMULATED market model:
// live_trades and order_book channels (the whole top 100 at every change), heartbeats, reconnect
// requests; the last minute, hour or day of trades.
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

/** Channels name pairs in lower case (btcusd). */
export const bitstampFormat: ListingFormat = { quotes: ['USD'], appetite: 1.5, market: (base, quote) => ({ symbol: `${base}${quote}`.toLowerCase(), base, quote }) };

export function bitstampListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  // A BTC-quoted pair gives collectors something to filter out.
  return [...tickers.map((t) => bitstampFormat.market(t, 'USD')), { symbol: 'ethbtc', base: 'ETH', quote: 'BTC' }];
}

const micros = (ms: number) => String(ms * 1_000);

/** transactions' `time`: the window it serves, up to now; `hour` when none is given. */
const transactionWindows: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/**
 * Bitstamp's limits per client: 400 requests a second and 10,000 in 10 minutes (its API page, as
 * quoted by api-evangelist/bitstamp rate-limits.yml). Past them the request is rejected with
 * response code 400.002; the HTTP status is taken from the code's family.
 */
const bitstampRestLimits = [
  { limit: 400, windowMs: 1_000 },
  { limit: 10_000, windowMs: 600_000 },
];
const rateLimited = { status: 400, body: { response_code: '400.002', response_explanation: 'Request rejected due to exceeded rate limit.' } };

/** A printed trade as transactions lists it: strings throughout, `date` in whole seconds, `type` 0 buy / 1 sell (the taker). */
const transaction = (t: SimTrade) => ({ date: String(Math.floor(t.time / 1_000)), tid: String(t.id), price: t.price, type: t.side === 'buy' ? '0' : '1', amount: t.qty });

export function bitstampProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  const channelPattern = /^(live_trades|order_book)_(.+)$/;

  const book = (m: SimMarket, now: number) => ({
    data: { timestamp: String(Math.floor(now / 1_000)), microtimestamp: micros(now), bids: sortedLevels(m.bids, 'bid', 100), asks: sortedLevels(m.asks, 'ask', 100) },
    channel: `order_book_${m.symbol}`,
    event: 'data',
  });

  const limits = bitstampRestLimits.map((l) => new RestRateLimit(l.limit, l.windowMs));
  /** Every printed trade of the pair in the window, newest first, in one answer. */
  const transactions = (symbol: string, url: URL) => {
    const now = Date.now();
    if (!limits.every((l) => l.take(now))) return rateLimited;
    const window = transactionWindows[url.searchParams.get('time') ?? 'hour'] ?? transactionWindows.hour!;
    return { status: 200, body: server.printed.between(symbol, now - window, Infinity, Infinity).reverse().map(transaction) };
  };

  return {
    rest(url) {
      const pair = /^\/api\/v2\/transactions\/([^/]+)\/?$/.exec(url.pathname)?.[1];
      if (pair !== undefined && bySymbol.has(pair)) return transactions(pair, url);
      if (url.pathname !== '/api/v2/trading-pairs-info/') return undefined;
      const body = server.listing.markets.map((m) => ({
        name: `${m.base}/${m.quote}`,
        url_symbol: m.symbol,
        base_decimals: m.qtyDecimals,
        counter_decimals: m.priceDecimals,
        instant_order_counter_decimals: m.priceDecimals,
        minimum_order: `10 ${m.quote}`,
        trading: 'Enabled',
        instant_and_market_orders: 'Enabled',
        // The venue's words, full names (Bitcoin / U.S. dollar).
        description: `${m.baseName} / ${m.quoteName}`,
      }));
      return { status: 200, body };
    },
    message(client: SimClient, text: string) {
      let request: { event?: unknown; data?: { channel?: unknown } };
      try {
        request = JSON.parse(text);
      } catch {
        server.send(client, { event: 'bts:error', channel: '', data: { code: null, message: 'Incorrect JSON format.' } });
        return;
      }
      if (request.event === 'bts:heartbeat') {
        server.send(client, { event: 'bts:heartbeat', channel: '', data: { status: 'success' } });
        return;
      }
      const channel = String(request.data?.channel ?? '');
      const match = channelPattern.exec(channel);
      if ((request.event !== 'bts:subscribe' && request.event !== 'bts:unsubscribe') || !match || !bySymbol.has(match[2]!)) {
        server.send(client, { event: 'bts:error', channel, data: { code: null, message: `Bad subscription string: ${channel}` } });
        return;
      }
      if (request.event === 'bts:unsubscribe') {
        client.topics.delete(channel);
        server.send(client, { event: 'bts:unsubscription_succeeded', channel, data: {} });
        return;
      }
      client.topics.add(channel);
      // Nothing more: the venue sends a book at its next change, not on subscription.
      server.send(client, { event: 'bts:subscription_succeeded', channel, data: {} });
    },
    publish(m, step, now) {
      for (const t of step.trades) {
        const data = {
          id: t.id,
          timestamp: String(Math.floor(t.time / 1_000)),
          amount: Number(t.qty),
          amount_str: t.qty,
          price: Number(t.price),
          price_str: t.price,
          type: t.side === 'buy' ? 0 : 1,
          microtimestamp: micros(t.time),
          buy_order_id: t.id * 2,
          sell_order_id: t.id * 2 + 1,
        };
        if (server.publish(`live_trades_${m.symbol}`, () => ({ data, channel: `live_trades_${m.symbol}`, event: 'trade' }))) server.trades.push(t);
      }
      if (server.takeGap(m.symbol)) return;
      server.publish(`order_book_${m.symbol}`, () => book(m, now));
    },
    reconnectNotice: () => ({ event: 'bts:request_reconnect', channel: '', data: '' }),
  };
}

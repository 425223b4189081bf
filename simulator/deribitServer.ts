// Deribit's JSON-RPC websocket and instruments REST over the SIMULATED market model: linear USDC
// and inverse USD perpetuals, trades (liquidations are trades flagged with the side being liquidated), books
// chained by change_id, public/test. The trade history (`public/get_last_trades_by_instrument`, by
// trade_seq) answers from the trades the venue printed, sent or not, liquidation trades among them.
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

/** The linear perpetuals, settled in USDC (SOL_USDC-PERPETUAL). */
export const deribitFormat: ListingFormat = { quotes: ['USDC'], appetite: 0.5, market: (base, quote) => ({ symbol: `${base}_${quote}-PERPETUAL`, base, quote, perpetual: true }) };

export function deribitListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  // The inverse perpetuals (amounts in USD) Deribit lists for its two main coins.
  const inverse = tickers.filter((t) => t === 'BTC' || t === 'ETH').map((t) => ({ symbol: `${t}-PERPETUAL`, base: t, quote: 'USD', perpetual: true, inverse: true, contractSize: 1 }));
  return [...tickers.map((t) => deribitFormat.market(t, 'USDC')), ...inverse];
}

const channelPattern = /^(trades|book)\.(.+)\.(100ms|agg2)$/;

/** Public requests: credits refilled at about 20 a second (Deribit rate limits; the credit pool's burst is not modelled). */
export const deribitHistoryLimit = { limit: 20, windowMs: 1_000 };
const lastTradesMax = 1_000;

/** The filters of get_last_trades_by_instrument: trade_seq and timestamp ranges, both ends included. */
function matching(trades: readonly SimTrade[], url: URL): SimTrade[] {
  const bound = (name: string, fallback: number) => (url.searchParams.has(name) ? Number(url.searchParams.get(name)) : fallback);
  const [startSeq, endSeq] = [bound('start_seq', -Infinity), bound('end_seq', Infinity)];
  const [startTs, endTs] = [bound('start_timestamp', -Infinity), bound('end_timestamp', Infinity)];
  return trades.filter((t) => t.id >= startSeq && t.id <= endSeq && t.time >= startTs && t.time <= endTs);
}

export function deribitProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  const stamps = () => {
    const us = Date.now() * 1_000;
    return { usIn: us, usOut: us + 50, usDiff: 50, testnet: false };
  };
  const notify = (channel: string, data: unknown) => ({ jsonrpc: '2.0', method: 'subscription', params: { channel, data } });
  const levels = (raw: [string, string][], action: 'new' | 'change') => raw.map(([p, q]) => (Number(q) === 0 ? ['delete', Number(p), 0] : [action, Number(p), Number(q)]));
  const snapshot = (m: SimMarket, channel: string) =>
    notify(channel, {
      type: 'snapshot',
      timestamp: Date.now(),
      instrument_name: m.symbol,
      change_id: m.updateId,
      bids: levels(sortedLevels(m.bids, 'bid'), 'new'),
      asks: levels(sortedLevels(m.asks, 'ask'), 'new'),
    });
  const tradeRow = (m: SimMarket, t: Pick<SimTrade, 'id' | 'time' | 'price' | 'qty' | 'side'>, liquidation?: 'M' | 'T') => ({
    trade_seq: t.id,
    trade_id: String(t.id),
    timestamp: t.time,
    tick_direction: 0,
    price: Number(t.price),
    mark_price: Number(t.price),
    instrument_name: m.symbol,
    index_price: Number(t.price),
    direction: t.side,
    amount: Number(t.qty),
    ...(liquidation ? { liquidation } : {}),
  });

  function request(client: SimClient, text: string): void {
    let rpc: { id?: unknown; method?: unknown; params?: { channels?: unknown } };
    try {
      rpc = JSON.parse(text);
    } catch {
      server.send(client, { jsonrpc: '2.0', error: { message: 'Parse error', code: -32700 }, ...stamps() });
      return;
    }
    const reply = (result: unknown) => server.send(client, { jsonrpc: '2.0', id: rpc.id, result, ...stamps() });
    if (rpc.method === 'public/test') return void reply({ version: '1.2.26' });
    if (rpc.method !== 'public/subscribe' && rpc.method !== 'public/unsubscribe') {
      return void server.send(client, { jsonrpc: '2.0', id: rpc.id, error: { message: 'Method not found', code: -32601 }, ...stamps() });
    }
    const channels = Array.isArray(rpc.params?.channels) ? rpc.params.channels.map(String) : [];
    const invalid = channels.find((c) => !bySymbol.has(channelPattern.exec(c)?.[2] ?? ''));
    if (invalid !== undefined) {
      return void server.send(client, { jsonrpc: '2.0', id: rpc.id, error: { message: 'Invalid params', data: { reason: 'invalid channel', param: 'channels' }, code: -32602 }, ...stamps() });
    }
    const topic = (c: string) => {
      const [, kind, symbol] = channelPattern.exec(c)!;
      return `${kind}:${symbol}`;
    };
    if (rpc.method === 'public/unsubscribe') {
      for (const c of channels) client.topics.delete(topic(c));
      return void reply(channels);
    }
    for (const c of channels) client.topics.add(topic(c));
    reply(channels);
    for (const c of channels) if (c.startsWith('book.')) server.send(client, snapshot(bySymbol.get(channelPattern.exec(c)![2]!)!, c));
  }

  const historyLimit = new RestRateLimit(deribitHistoryLimit.limit, deribitHistoryLimit.windowMs);
  const rpcError = (status: number, error: object) => ({ status, body: { jsonrpc: '2.0', error, ...stamps() } });

  /**
   * `public/get_last_trades_by_instrument`: the trades matching the filters, `count` of them (10 by
   * default, at most 1000) from the oldest (`sorting=asc`) or the newest (otherwise), and whether
   * more matched. Trades past the venue's memory are simply not there.
   */
  function lastTrades(url: URL) {
    // The credit error is Deribit's; the HTTP status it comes with over REST is not documented.
    if (!historyLimit.take()) return rpcError(429, { message: 'too_many_requests', code: 10028 });
    const m = bySymbol.get(url.searchParams.get('instrument_name') ?? '');
    if (!m) return rpcError(400, { message: 'Invalid params', data: { reason: 'wrong format', param: 'instrument_name' }, code: -32602 });
    const count = url.searchParams.has('count') ? Number(url.searchParams.get('count')) : 10;
    if (!Number.isSafeInteger(count) || count < 1 || count > lastTradesMax) return rpcError(400, { message: 'Invalid params', data: { reason: 'must be between 1 and 1000', param: 'count' }, code: -32602 });
    // Liquidation trades are numbered after the step's trades but may be timed before them: order by number.
    const matched = matching(server.printed.of(m.symbol), url).sort((a, b) => a.id - b.id);
    const asc = url.searchParams.get('sorting') === 'asc';
    const page = asc ? matched.slice(0, count) : matched.slice(-count).reverse();
    return { status: 200, body: { jsonrpc: '2.0', result: { trades: page.map((t) => tradeRow(m, t)), has_more: matched.length > count }, ...stamps() } };
  }

  return {
    rest(url) {
      if (url.pathname === '/api/v2/public/get_last_trades_by_instrument') return lastTrades(url);
      if (url.pathname !== '/api/v2/public/get_instruments') return undefined;
      const result = server.listing.markets.map((m) => ({
        tick_size: m.tick,
        settlement_period: 'perpetual',
        settlement_currency: m.inverse ? m.base : m.quote,
        quote_currency: m.quote,
        min_trade_amount: 10 ** -m.qtyDecimals,
        kind: 'future',
        is_active: true,
        instrument_name: m.symbol,
        future_type: m.inverse ? 'reversed' : 'linear',
        expiration_timestamp: 32503708800000,
        counter_currency: m.quote,
        contract_size: m.inverse ? 1 : 10 ** -m.qtyDecimals,
        base_currency: m.base,
      }));
      return { status: 200, body: { jsonrpc: '2.0', result, ...stamps() } };
    },
    message: request,
    publish(m, step, now) {
      const channel = `trades.${m.symbol}.100ms`;
      const rows = step.trades.map((t) => tradeRow(m, t));
      const liquidationTrades: SimTrade[] = [];
      step.liquidations.forEach((l, i) => {
        // Alternately the taker (T) or the maker (M) was the one liquidated; a forced sell closes a long.
        const flag = i % 2 === 0 ? 'T' : 'M';
        const forcedSide = l.positionSide === 'long' ? 'sell' : 'buy';
        const side = flag === 'T' ? forcedSide : forcedSide === 'sell' ? 'buy' : 'sell';
        const t: SimTrade = { venue: l.venue, symbol: m.symbol, base: m.base, quote: m.quote, id: m.nextTradeId++, price: l.price, qty: l.qty, side, time: l.time };
        liquidationTrades.push(t);
        rows.push(tradeRow(m, t, flag));
      });
      // Liquidation trades are trades of the venue's sequence too: its history holds them.
      server.printed.push(liquidationTrades);
      if (rows.length > 0 && server.publish(`trades:${m.symbol}`, () => notify(channel, rows))) {
        server.trades.push(...step.trades, ...liquidationTrades);
        server.liquidations.push(...step.liquidations);
      }
      if (server.takeGap(m.symbol)) return;
      const { diff } = step;
      const change = {
        type: 'change',
        timestamp: now,
        prev_change_id: diff.firstUpdateId - 1,
        instrument_name: m.symbol,
        change_id: diff.finalUpdateId,
        bids: levels(diff.bids, 'change'),
        asks: levels(diff.asks, 'change'),
      };
      server.publish(`book:${m.symbol}`, () => notify(`book.${m.symbol}.100ms`, change));
    },
  };
}

// Bitget's v2 public websocket (spot), SIMULATED: https://www.bitget.com/api-doc/spot/websocket/public/Trades-Channel
// and .../Depth-Channel. Subscriptions `{"op":"subscribe","args":[{instType,channel,instId}]}`; the
// `books` channel sends a snapshot, then updates whose `checksum` is the CRC32 (signed) of the top 25
// levels interleaved bid:ask as `price:size` strings; text `ping` is answered `pong`.
import { crc32 } from 'node:zlib';
import type { Exchange } from 'ccxt';
import { sortedLevels, type SimMarket } from '../market.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from '../venueServer.ts';
import markets from './__fixtures__/bitget.markets.json' with { type: 'json' };
import type { CcxtSimVenue } from './simulator.ts';

/** The venue's checksum of its own book. */
export function bitgetChecksum(m: Pick<SimMarket, 'bids' | 'asks'>): number {
  const bids = sortedLevels(m.bids, 'bid', 25);
  const asks = sortedLevels(m.asks, 'ask', 25);
  const parts: string[] = [];
  for (let i = 0; i < 25; i++) {
    if (bids[i]) parts.push(...bids[i]!);
    if (asks[i]) parts.push(...asks[i]!);
  }
  return crc32(parts.join(':')) | 0;
}

interface Arg {
  instType?: string;
  channel?: string;
  instId?: string;
}

function bitgetProtocol(server: SimVenueServer): VenueProtocol {
  const bySymbol = new Map(server.listing.markets.map((m) => [m.symbol, m]));
  const topic = (channel: string, instId: string) => `${channel}:${instId}`;
  const book = (m: SimMarket, action: 'snapshot' | 'update', bids: [string, string][], asks: [string, string][], now: number) => ({
    action,
    arg: { instType: 'SPOT', channel: 'books', instId: m.symbol },
    data: [{ asks, bids, checksum: bitgetChecksum(m), seq: m.updateId, ts: String(now) }],
    ts: now,
  });
  return {
    rest: () => undefined,
    message(client: SimClient, text: string) {
      if (text === 'ping') return void server.send(client, 'pong');
      let request: { op?: unknown; args?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        return void server.send(client, { event: 'error', code: 30016, msg: 'Param error' });
      }
      if ((request.op !== 'subscribe' && request.op !== 'unsubscribe') || !Array.isArray(request.args))
        return void server.send(client, { event: 'error', code: 30003, msg: 'invalid op' });
      for (const arg of request.args as Arg[]) {
        const m = bySymbol.get(arg.instId ?? '');
        if (!m || arg.instType !== 'SPOT' || (arg.channel !== 'trade' && arg.channel !== 'books')) {
          server.send(client, { event: 'error', arg, code: 30001, msg: `instType:${arg.instType},channel:${arg.channel},instId:${arg.instId} doesn't exist` });
          continue;
        }
        if (request.op === 'unsubscribe') {
          client.topics.delete(topic(arg.channel, m.symbol));
          server.send(client, { event: 'unsubscribe', arg });
          continue;
        }
        client.topics.add(topic(arg.channel, m.symbol));
        server.send(client, { event: 'subscribe', arg });
        if (arg.channel === 'books') server.send(client, book(m, 'snapshot', sortedLevels(m.bids, 'bid'), sortedLevels(m.asks, 'ask'), Date.now()));
      }
    },
    publish(m, step, now) {
      const data = step.trades.map((t) => ({ ts: String(t.time), price: t.price, size: t.qty, side: t.side, tradeId: String(t.id) }));
      const message = { action: 'update', arg: { instType: 'SPOT', channel: 'trade', instId: m.symbol }, data, ts: now };
      if (data.length > 0 && server.publish(topic('trade', m.symbol), () => message)) server.trades.push(...step.trades);
      if (server.takeGap(m.symbol)) return;
      const update = book(m, 'update', step.diff.bids, step.diff.asks, now);
      server.publish(topic('books', m.symbol), () => update);
    },
  };
}

export const bitget: CcxtSimVenue = {
  ccxt: 'bitget',
  markets,
  protocol: bitgetProtocol,
  pointAt(exchange: Exchange, wsUrl: string) {
    exchange.urls.api.ws.public = `${wsUrl}/v2/ws/public`;
  },
};

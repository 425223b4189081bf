// Deribit API v2 over websocket (JSON-RPC): https://docs.deribit.com/#subscriptions
// Linear USDC perpetuals (BTC_USDC-PERPETUAL: amounts in the base coin): trades.{instrument}.100ms
// and book.{instrument}.100ms, a snapshot on subscription, then changes chained by change_id and
// prev_change_id. Our ladder's prices never come or go: every change is a "change".
import type { Level } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { bySymbol, parseRequest, recorded, recordedSession, type LoadVenueFormat } from './format.ts';

type Notification = { params: { channel: string; data: Record<string, unknown> } };

export function deribitFormat(): LoadVenueFormat {
  const session = recordedSession<Notification & { result?: unknown }>('deribit', 'ws_recorded_cryptofeed.json');
  const subscribed = session.find((f) => Array.isArray(f.result))!;
  const bookFrame = (type: string) => {
    const frame = session.find((f) => f.params?.data.type === type)!;
    frame.params.channel = textSlot('channel');
    Object.assign(frame.params.data, { timestamp: valueSlot('ts'), instrument_name: textSlot('instrument'), change_id: valueSlot('id'), bids: valueSlot('bids'), asks: valueSlot('asks') }, type === 'change' ? { prev_change_id: valueSlot('prevId') } : {});
    return new FrameTemplate(frame);
  };
  const snapshot = bookFrame('snapshot');
  const change = bookFrame('change');
  // The recorded trades are of the inverse BTC-PERPETUAL; linear instruments' ids carry their settlement currency (documented fixture).
  const [tradeFrame] = recorded<Notification[]>('deribit', 'ws_recorded_tardis.json');
  tradeFrame!.params.channel = textSlot('channel');
  const tradeRow = (tradeFrame!.params.data as unknown as Record<string, unknown>[])[0]!;
  Object.assign(tradeFrame!.params, {
    data: [Object.assign(tradeRow, { trade_seq: valueSlot('seq'), trade_id: textSlot('id'), timestamp: valueSlot('ts'), price: valueSlot('price'), instrument_name: textSlot('instrument'), index_price: valueSlot('price'), direction: textSlot('side'), amount: valueSlot('amount') })],
  });
  const trade = new FrameTemplate(tradeFrame);
  const control = recorded<{ result?: unknown }[]>('deribit', 'ws_control.json');
  const version = control.find((f) => typeof f.result === 'object' && f.result !== null && 'version' in f.result)!;
  const instruments = recorded<{ result: Record<string, unknown>[] }>('deribit', 'rest_instruments.json');
  const linear = instruments.result.find((i) => i.settlement_currency === 'USDC')!;
  const times = () => {
    const micros = Date.now() * 1_000;
    return { usIn: micros, usOut: micros, usDiff: 0 };
  };
  const levels = (action: string, list: readonly Level[]) => `[${list.map(([p, q]) => `["${action}",${p},${q}]`).join(',')}]`;
  const channels = new Map<string, { trades: string; book: string }>();
  const channelsOf = (symbol: string) => channels.get(symbol) ?? channels.set(symbol, { trades: `trades.${symbol}.100ms`, book: `book.${symbol}.100ms` }).get(symbol)!;
  const tradeId = (n: number) => `USDC-${n}`;
  return {
    id: 'deribit',
    market: (base) => ({ symbol: `${base}_USDC-PERPETUAL`, quote: 'USDC' }),
    rest(url, markets) {
      if (url.pathname !== '/api/v2/public/get_instruments') return undefined;
      const result = [...markets.values()].map((m) => ({ ...linear, instrument_name: m.symbol, base_currency: m.base, counter_currency: m.quote, quote_currency: m.quote, settlement_currency: m.quote, is_active: true }));
      return { ...instruments, result };
    },
    message(client, text, markets) {
      const request = parseRequest(text);
      // The recorded answer's envelope (usIn, usOut, testnet), its result replaced.
      const reply = (fields: object) => client.send(JSON.stringify({ ...subscribed, result: undefined, id: request?.id, ...fields, ...times() }));
      if (request?.method === 'public/test') return reply({ result: version.result });
      const requested = (request?.params as { channels?: unknown } | undefined)?.channels;
      if ((request?.method !== 'public/subscribe' && request?.method !== 'public/unsubscribe') || !Array.isArray(requested)) {
        return reply({ error: { message: 'Method not found', code: -32601 } });
      }
      const accepted: string[] = [];
      const snapshots: string[] = [];
      for (const channel of requested.map(String)) {
        const [kind, instrument] = channel.split('.');
        const m = bySymbol(markets, instrument);
        if (!m || (kind !== 'trades' && kind !== 'book')) continue;
        accepted.push(channel);
        const topic = `${kind === 'book' ? 'books' : 'trades'}:${m.symbol}`;
        if (request.method === 'public/unsubscribe') client.topics.delete(topic);
        else client.topics.add(topic);
        if (kind === 'book' && request.method === 'public/subscribe') {
          snapshots.push(snapshot.render({ channel, ts: Date.now(), instrument: m.symbol, id: m.updateId, bids: levels('new', m.bids), asks: levels('new', m.asks) }));
        }
      }
      reply({ result: accepted });
      for (const frame of snapshots) client.send(frame);
    },
    perClient: false,
    // `direction` is the taker's side.
    trade: (m, t, now) =>
      trade.render({ channel: channelsOf(m.symbol).trades, seq: t.n, id: tradeId(t.n), ts: now, price: t.price, instrument: m.symbol, side: t.side, amount: t.quantity }),
    book: (m, c, now) =>
      change.render({ channel: channelsOf(m.symbol).book, ts: now, instrument: m.symbol, id: c.id, prevId: c.prevId, bids: levels('change', [c.bid]), asks: levels('change', [c.ask]) }),
    tradeId,
  };
}

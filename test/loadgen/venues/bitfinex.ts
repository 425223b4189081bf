// Bitfinex websocket v2 exchange pairs: https://docs.bitfinex.com/docs/ws-public
// Channels are numbered per connection (chanId): here each market's numbers are fixed, the same on
// every connection, so one rendering serves all clients. A trade comes as "te", then again as "tu";
// the P0 book one level per frame, then the CRC32 checksum of its top 25 (conf flag 131072, which
// the collector always asks for; computed by simulator/checksums.ts).
import { bitfinexBookChecksum } from '../../../simulator/checksums.ts';
import type { Level, LoadMarket } from '../market.ts';
import { FrameTemplate, valueSlot } from '../template.ts';
import { bySymbol, parseRequest, recorded, recordedSession, type LoadVenueFormat } from './format.ts';

/** Pairs of two three-letter tickers are written together, longer ones with a colon (DOGE:USD). */
const pairName = (base: string, quote: string) => (base.length === 3 && quote.length === 3 ? `${base}${quote}` : `${base}:${quote}`);

export function bitfinexFormat(): LoadVenueFormat {
  const tardis = recorded<unknown[]>('bitfinex', 'ws_recorded_tardis.json');
  const isRow = (value: unknown) => Array.isArray(value) && typeof value[0] === 'number';
  /** A recorded channel frame cut to [chanId, payload] or [chanId, kind, payload]: the recording's conf also asked for sequence numbers, appended after. */
  const channelFrame = (frames: unknown[], length: number, match: (f: unknown[]) => boolean, slots: Record<number, unknown>) =>
    new FrameTemplate(Object.assign((frames.find((f) => Array.isArray(f) && match(f)) as unknown[]).slice(0, length), { 0: valueSlot('chanId') }, slots));
  const tradeFrame = (kind: 'te' | 'tu') => channelFrame(tardis, 3, (f) => f[1] === kind, { 2: [valueSlot('id'), valueSlot('mts'), valueSlot('amount'), valueSlot('price')] });
  const executed = tradeFrame('te');
  const recordedCopy = tradeFrame('tu');
  const level = channelFrame(tardis, 2, (f) => isRow(f[1]), { 1: [valueSlot('price'), valueSlot('count'), valueSlot('amount')] });
  const snapshot = channelFrame(tardis, 2, (f) => Array.isArray(f[1]) && isRow(f[1][0]) && f[1][0].length === 3, { 1: valueSlot('rows') });
  // No recording has checksums: the documented frame (hand-written fixture).
  const checksumFrame = channelFrame(recorded<unknown[]>('bitfinex', 'ws_book_update.json'), 3, (f) => f[1] === 'cs', { 2: valueSlot('checksum') });
  const events = tardis.filter((f): f is Record<string, unknown> => !Array.isArray(f));
  const tradesSubscribed = events.find((e) => e.event === 'subscribed' && e.channel === 'trades')!;
  const bookSubscribed = events.find((e) => e.event === 'subscribed' && e.channel === 'book')!;
  const [info, conf] = recordedSession('bitfinex', 'ws_recorded_cryptofeed.json');
  const control = recorded<Record<string, unknown>[]>('bitfinex', 'ws_control.json');
  const pong = control.find((f) => f.event === 'pong')!;
  const unsubscribed = control.find((f) => f.event === 'unsubscribed')!;
  const pairs = recorded<[string[]]>('bitfinex', 'rest_pairs_exchange.json');
  const channels = new Map<string, { trades: number; book: number }>();
  const channelsOf = (m: LoadMarket) => {
    let numbers = channels.get(m.symbol);
    if (!numbers) channels.set(m.symbol, (numbers = { trades: 17_000 + 2 * channels.size, book: 17_001 + 2 * channels.size }));
    return numbers;
  };
  // [PRICE, COUNT, AMOUNT]: asks carry negative amounts; every level here holds one order.
  const rows = (levels: readonly Level[], sign: '' | '-') => levels.map(([price, qty]) => `[${price},1,${sign}${qty}]`);
  const signed = (levels: readonly Level[], sign: 1 | -1) => levels.slice(0, 25).map(([p, q]) => [Number(p), sign * Number(q)] as const);
  const checksum = (m: LoadMarket) => bitfinexBookChecksum(signed(m.bids, 1), signed(m.asks, -1));
  return {
    id: 'bitfinex',
    market: (base) => ({ symbol: `t${pairName(base, 'USD')}`, quote: 'USD' }),
    rest: (url, markets) => (url.pathname === '/v2/conf/pub:list:pair:exchange' ? [[...markets.keys()].map((symbol) => symbol.slice(1)), ...pairs.slice(1)] : undefined),
    open: (client) => client.send(JSON.stringify(info)),
    message(client, text, markets) {
      const request = parseRequest(text);
      if (request?.event === 'ping') return client.send(JSON.stringify({ ...pong, ts: Date.now(), cid: request.cid }));
      if (request?.event === 'conf') return client.send(JSON.stringify({ ...conf, flags: request.flags }));
      // The collector resubscribes a book by its channel number.
      if (request?.event === 'unsubscribe') {
        const [symbol, numbers] = [...channels].find(([, n]) => n.trades === request.chanId || n.book === request.chanId) ?? [];
        if (symbol === undefined) return client.send(JSON.stringify({ event: 'error', msg: 'unsubscribe: invalid', code: 10400 }));
        client.topics.delete(`${numbers!.book === request.chanId ? 'books' : 'trades'}:${symbol}`);
        return client.send(JSON.stringify({ ...unsubscribed, chanId: request.chanId }));
      }
      const m = bySymbol(markets, request?.symbol);
      if (request?.event !== 'subscribe' || !m || (request.channel !== 'trades' && request.channel !== 'book')) {
        return client.send(JSON.stringify({ event: 'error', msg: 'subscribe: failed', code: 10300, channel: request?.channel, symbol: request?.symbol }));
      }
      const pair = m.symbol.slice(1);
      const { trades, book } = channelsOf(m);
      if (request.channel === 'trades') {
        client.topics.add(`trades:${m.symbol}`);
        client.send(JSON.stringify({ ...tradesSubscribed, chanId: trades, symbol: m.symbol, pair }));
        // The recent trades a subscription starts with: none here.
        return client.send(snapshot.render({ chanId: trades, rows: '[]' }));
      }
      client.topics.add(`books:${m.symbol}`);
      client.send(JSON.stringify({ ...bookSubscribed, chanId: book, symbol: m.symbol, prec: request.prec ?? 'P0', freq: request.freq ?? 'F0', len: request.len ?? '25', pair }));
      client.send(snapshot.render({ chanId: book, rows: `[${[...rows(m.bids, ''), ...rows(m.asks, '-')].join(',')}]` }));
      client.send(checksumFrame.render({ chanId: book, checksum: checksum(m) }));
    },
    perClient: false,
    trade(m, t, now) {
      // AMOUNT signed by the taker's side.
      const row = { chanId: channelsOf(m).trades, id: t.n, mts: now, amount: t.side === 'buy' ? t.quantity : `-${t.quantity}`, price: t.price };
      return [executed.render(row), recordedCopy.render(row)];
    },
    book(m, c) {
      const chanId = channelsOf(m).book;
      return [
        level.render({ chanId, price: c.bid[0], count: 1, amount: c.bid[1] }),
        level.render({ chanId, price: c.ask[0], count: 1, amount: `-${c.ask[1]}` }),
        checksumFrame.render({ chanId, checksum: checksum(m) }),
      ];
    },
    tradeId: (n) => String(n),
  };
}

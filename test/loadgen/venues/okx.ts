// OKX v5 spot: https://www.okx.com/docs-v5/en/#overview-websocket
import { okxBookChecksum } from '../../../simulator/checksums.ts';
import type { Level, LoadMarket } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { bySymbol, parseRequest, recorded, recordedSession, type LoadVenueFormat } from './format.ts';

export function okxFormat(): LoadVenueFormat {
  const session = recordedSession('okx', 'ws_recorded_cryptofeed.json');
  const tradeFrame = session.find((f) => (f.arg as { channel?: string } | undefined)?.channel === 'trades' && !f.event)!;
  Object.assign(tradeFrame, { arg: { channel: 'trades', instId: textSlot('instId') } });
  Object.assign((tradeFrame.data as object[])[0]!, { instId: textSlot('instId'), tradeId: textSlot('tradeId'), px: textSlot('px'), sz: textSlot('sz'), side: textSlot('side'), ts: textSlot('ts') });
  // The recording predates OKX's seqId/prevSeqId; they are added as the venue sends them now.
  const bookFrame = (action: string) => {
    const frame = session.find((f) => f.action === action)!;
    Object.assign(frame, { arg: { channel: 'books', instId: textSlot('instId') } });
    Object.assign((frame.data as object[])[0]!, { asks: valueSlot('asks'), bids: valueSlot('bids'), ts: textSlot('ts'), checksum: valueSlot('checksum'), prevSeqId: valueSlot('prevSeqId'), seqId: valueSlot('seqId') });
    return new FrameTemplate(frame);
  };
  const trade = new FrameTemplate(tradeFrame);
  const update = bookFrame('update');
  const snapshot = bookFrame('snapshot');
  const instruments = recorded<{ data: Record<string, unknown>[] }>('okx', 'rest_instruments_spot.json');
  const okxLevels = (levels: readonly Level[]) => JSON.stringify(levels.map(([p, q]) => [p, q, '0', '1']));
  const checksum = (m: LoadMarket) => okxBookChecksum(m.bids.slice(0, 25), m.asks.slice(0, 25));
  return {
    id: 'okx',
    market: (base) => ({ symbol: `${base}-USDT`, quote: 'USDT' }),
    rest(url, markets) {
      if (url.pathname !== '/api/v5/public/instruments' || url.searchParams.get('instType') !== 'SPOT') return undefined;
      const [prototype] = instruments.data;
      return { ...instruments, data: [...markets.values()].map((m) => ({ ...prototype, instId: m.symbol, baseCcy: m.base, quoteCcy: m.quote, state: 'live' })) };
    },
    message(client, text, markets) {
      if (text === 'ping') return client.send('pong');
      const request = parseRequest(text);
      if (request?.op !== 'subscribe' || !Array.isArray(request.args)) return client.send(JSON.stringify({ event: 'error', code: '60012', msg: 'Invalid request' }));
      for (const arg of request.args as { channel?: string; instId?: string }[]) {
        const m = bySymbol(markets, arg.instId);
        client.send(JSON.stringify({ event: 'subscribe', arg }));
        if (!m) continue;
        client.topics.add(`${arg.channel === 'books' ? 'books' : 'trades'}:${m.symbol}`);
        if (arg.channel === 'books') {
          client.send(snapshot.render({ instId: m.symbol, asks: okxLevels(m.asks), bids: okxLevels(m.bids), ts: Date.now(), checksum: checksum(m), prevSeqId: -1, seqId: m.updateId }));
        }
      }
    },
    perClient: false,
    trade: (m, t, now) => trade.render({ instId: m.symbol, tradeId: String(t.n), px: t.price, sz: t.quantity, side: t.side, ts: now }),
    book: (m, c, now) =>
      update.render({ instId: m.symbol, asks: okxLevels([c.ask]), bids: okxLevels([c.bid]), ts: now, checksum: checksum(m), prevSeqId: c.prevId, seqId: c.id }),
    tradeId: (n) => String(n),
  };
}

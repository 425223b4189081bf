// Binance USD-M futures: https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams
// Aggregate trades and depth diffs chained by `pu` (the previous diff's `u`); the collector puts
// depth on /public and trades on /market, which this server answers alike. Perpetuals in base units.
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { binanceRest, binanceSubscriptions, streamNames } from './binance.ts';
import { levelsJson, recorded, recordedSession, type LoadVenueFormat } from './format.ts';

export function binanceFuturesFormat(): LoadVenueFormat {
  const session = recordedSession<{ data: Record<string, unknown> }>('binance-futures', 'ws_recorded_cryptofeed.json');
  const tradeFrame = session.find((f) => f.data.e === 'aggTrade')!;
  Object.assign(tradeFrame, { stream: textSlot('stream') });
  Object.assign(tradeFrame.data, { E: valueSlot('E'), a: valueSlot('a'), s: textSlot('s'), p: textSlot('p'), q: textSlot('q'), f: valueSlot('f'), l: valueSlot('l'), T: valueSlot('T'), m: valueSlot('m') });
  const depthFrame = session.find((f) => f.data.e === 'depthUpdate')!;
  Object.assign(depthFrame, { stream: textSlot('stream') });
  Object.assign(depthFrame.data, { E: valueSlot('E'), T: valueSlot('T'), s: textSlot('s'), U: valueSlot('U'), u: valueSlot('u'), pu: valueSlot('pu'), b: valueSlot('b'), a: valueSlot('a') });
  const trade = new FrameTemplate(tradeFrame);
  const depth = new FrameTemplate(depthFrame);
  const depthSnapshot = Object.values(recorded<Record<string, { json: Record<string, unknown> }>>('binance-futures', 'rest_recorded_depth.json'))[0]!.json;
  const streamName = streamNames();
  return {
    id: 'binance-futures',
    market: (base) => ({ symbol: `${base}USDT`, quote: 'USDT' }),
    // The listing's first symbol is a PERPETUAL, the contract type the collector follows.
    rest: binanceRest('/fapi/v1', recorded('binance-futures', 'rest_exchange_info.json'), depthSnapshot),
    message: binanceSubscriptions('aggTrade'),
    perClient: false,
    // One aggregate per trade: its first and last trade id are the same.
    trade: (m, t, now) =>
      trade.render({ stream: `${streamName(m)}@aggTrade`, E: now + 1, a: t.n, s: m.symbol, p: t.price, q: t.quantity, f: 2 * t.n, l: 2 * t.n, T: now, m: t.side === 'sell' ? 'true' : 'false' }),
    book: (m, c, now) =>
      depth.render({ stream: `${streamName(m)}@depth@100ms`, E: now + 1, T: now, s: m.symbol, U: c.id, u: c.id, pu: c.prevId, b: levelsJson([c.bid]), a: levelsJson([c.ask]) }),
    tradeId: (n) => String(n),
  };
}

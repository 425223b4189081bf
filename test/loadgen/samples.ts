// What the generator sends, made in memory without sockets, for the bare ceilings a benchmark puts
// beside its figures: the same frames (for JSON.parse on one core) and the same trades as rows.
import { assetIdForVenueTicker } from '../../infra/catalog/catalog.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { venueMarkets } from './generator.ts';
import { nextBookChange, nextTrade } from './market.ts';
import { loadVenueFormats, type LoadClient } from './venues/index.ts';

const formatsOf = (venues: readonly string[]) => venues.map((id) => loadVenueFormats[id]!());

/** `count` frames per venue (a few more where one message is several frames), `booksPerTrade` book messages for each trade message, markets in turn. */
export function sampleFrames(venues: readonly string[], markets: number, count: number, booksPerTrade: number): string[] {
  const frames: string[] = [];
  const now = Date.now();
  for (const format of formatsOf(venues)) {
    const client: LoadClient = { topics: new Set(), sequence: 0, send: () => {} };
    const list = venueMarkets(format, markets);
    const end = frames.length + count;
    let bookCredit = 0;
    for (let i = 0; frames.length < end; i++) {
      const m = list[i % list.length]!;
      frames.push(...[format.trade(m, nextTrade(m), now, client)].flat());
      for (bookCredit += booksPerTrade; bookCredit >= 1; bookCredit--) frames.push(...[format.book(m, nextBookChange(m), now, client)].flat());
    }
  }
  return frames;
}

/** `count` trades per venue as the collectors publish them (before unit conversion, which is 1 on these spot markets). */
export function sampleTrades(venues: readonly string[], markets: number, count: number): TradeEvent[] {
  const trades: TradeEvent[] = [];
  const now = Date.now();
  for (const format of formatsOf(venues)) {
    const list = venueMarkets(format, markets);
    for (let i = 0; i < count; i++) {
      const m = list[i % list.length]!;
      const t = nextTrade(m);
      const ts = now - count + i;
      trades.push({
        type: 'trade', venue: format.id, market: m.symbol, asset: assetIdForVenueTicker(format.id, m.base)!, quote: m.quote,
        tradeId: format.tradeId(t.n), price: Number(t.price), quantity: Number(t.quantity), side: t.side, ts, receivedAt: ts + 2,
      });
    }
  }
  return trades;
}

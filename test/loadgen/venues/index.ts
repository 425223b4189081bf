// The venues the load generator speaks, one file each, in each venue's own format (format.ts):
// frames rendered from the venue's recorded fixtures with the variable fields as slots
// (../template.ts); REST listings, book snapshots and tokens from the recorded REST fixtures with
// our markets in them. Only what the collectors use (ingest/venues/<venue>.ts). One trade per frame
// (venues that batch several when busy send more messages/s here for the same trades/s).
import { binanceFuturesFormat } from './binance-futures.ts';
import { binanceFormat } from './binance.ts';
import { bitfinexFormat } from './bitfinex.ts';
import { bitmexFormat } from './bitmex.ts';
import { bitstampFormat } from './bitstamp.ts';
import { bybitFormat } from './bybit.ts';
import { coinbaseFormat } from './coinbase.ts';
import { deribitFormat } from './deribit.ts';
import type { LoadVenueFormat } from './format.ts';
import { gateFormat } from './gate.ts';
import { krakenFormat } from './kraken.ts';
import { kucoinFormat } from './kucoin.ts';
import { okxFormat } from './okx.ts';

export type { Frames, LoadClient, LoadVenueFormat } from './format.ts';

export const loadVenueFormats: Record<string, () => LoadVenueFormat> = {
  binance: binanceFormat,
  'binance-futures': binanceFuturesFormat,
  bitfinex: bitfinexFormat,
  bitmex: bitmexFormat,
  bitstamp: bitstampFormat,
  bybit: bybitFormat,
  coinbase: coinbaseFormat,
  deribit: deribitFormat,
  gate: gateFormat,
  kraken: krakenFormat,
  kucoin: kucoinFormat,
  okx: okxFormat,
};

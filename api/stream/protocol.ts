import { describeAsset } from '../../infra/catalog/discovered.ts';
import { ApiError, type ErrorBody } from '../errors.ts';
import { candleLimits, type CandleInterval } from '../read/candleSeries.ts';
import type { IndexCandle } from '../read/indexCandles.ts';
import type { PriceEntry } from '../read/prices.ts';

/**
 * The messages of GET /v1/stream (api/asyncapi.json documents them). The client sends
 * subscribe/unsubscribe/ping ops; the server answers each op, and sends data messages
 * `{channel, data: [...]}` for what is subscribed.
 */

export const streamChannels = ['prices', 'trades', 'candles'] as const;
export type StreamChannel = (typeof streamChannels)[number];
export const candleIntervals = Object.keys(candleLimits) as CandleInterval[];
/** Ids one subscribe or unsubscribe message may name, as /v1/prices?ids= allows. */
export const maxIdsPerMessage = 250;

/** One subscription: a channel of one asset (and, for candles, one interval). */
export interface StreamTopic {
  channel: StreamChannel;
  assetId: string;
  interval?: CandleInterval;
}

export type ClientRequest =
  | { op: 'subscribe' | 'unsubscribe'; channel: StreamChannel; ids: string[]; interval?: CandleInterval }
  | { op: 'ping' };

/** A trade as the stream sends it: the venue's market and price, as the collectors received it. */
export interface StreamTrade {
  assetId: string;
  venue: string;
  market: string;
  /** Quote currency of the market: the price is in it. */
  quote: string;
  price: number;
  /** Base asset units. */
  quantity: number;
  /** Taker side. */
  side: 'buy' | 'sell';
  /** unix ms, the venue's trade time. */
  time: number;
  tradeId: string;
}

/** The index candle of the interval that holds now, as the last candle of /v1/coins/{id}/ohlc (USD). */
export type StreamCandle = IndexCandle & { assetId: string };

export type ServerMessage =
  | { channel: 'prices'; data: PriceEntry[] }
  | { channel: 'trades'; data: StreamTrade[] }
  | { channel: 'candles'; interval: CandleInterval; data: StreamCandle[] }
  // Only data messages carry `channel` at the top: a client may dispatch on it.
  | { op: 'subscribed' | 'unsubscribed'; request: { channel: StreamChannel; ids: string[]; interval?: CandleInterval }; subscriptions: number }
  | { op: 'pong'; at: number }
  | ({ op: 'error' } & ErrorBody);

/** A bad message is answered with an error message; the connection stays open. */
const badRequest = (message: string) => new ApiError(400, 'bad_request', message);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (values: readonly string[]) => values.map((v) => JSON.stringify(v)).join(', ');

/** Parses one client message; throws ApiError 400 naming what is wrong. */
export function parseClientMessage(text: string): ClientRequest {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw badRequest('the message is not JSON: send e.g. {"op":"subscribe","channel":"prices","ids":["bitcoin"]}');
  }
  if (!isObject(message)) throw badRequest('the message must be a JSON object with an "op"');
  const { op } = message;
  if (op === 'ping') return { op };
  if (op !== 'subscribe' && op !== 'unsubscribe') throw badRequest(`unknown op ${JSON.stringify(op)}: send subscribe, unsubscribe or ping`);
  const { channel, ids, interval } = message;
  if (!streamChannels.includes(channel as StreamChannel)) {
    throw badRequest(`unknown channel ${JSON.stringify(channel)}: one of ${list(streamChannels)}`);
  }
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > maxIdsPerMessage || !ids.every((id) => typeof id === 'string')) {
    throw badRequest(`ids must be a list of 1 to ${maxIdsPerMessage} asset ids, e.g. ["bitcoin","ethereum"]`);
  }
  const unknown = ids.filter((id) => !describeAsset(id));
  if (unknown.length > 0) throw badRequest(`unknown asset ids ${list(unknown)}: use the ids of /v1/coins or /v1/search`);
  if (channel === 'candles') {
    if (!candleIntervals.includes(interval as CandleInterval)) throw badRequest(`candles need an interval: one of ${list(candleIntervals)}`);
    return { op, channel, ids: [...new Set(ids)], interval: interval as CandleInterval };
  }
  if (interval !== undefined) throw badRequest(`only candles take an interval, not ${channel}`);
  return { op, channel: channel as StreamChannel, ids: [...new Set(ids)] };
}

/** The subscriptions a subscribe or unsubscribe request names. */
export function topicsOf(request: Extract<ClientRequest, { ids: string[] }>): StreamTopic[] {
  return request.ids.map((assetId) => ({ channel: request.channel, assetId, ...(request.interval ? { interval: request.interval } : {}) }));
}

/** A subscription's identity, e.g. `candles|1m|bitcoin`. */
export function topicKey({ channel, assetId, interval }: StreamTopic): string {
  return interval ? `${channel}|${interval}|${assetId}` : `${channel}|${assetId}`;
}

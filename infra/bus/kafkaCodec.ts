import type { Message } from 'kafkajs';
import { schemaOfTopic, type EventOfTopic, type MarketEvent, type Topic } from '../events.ts';

/** Carried by every message, so a later change of the event format can be told apart. */
export const schemaVersion = '1';

/** An event as a Kafka message: keyed by its base asset (one partition per asset), its JSON as value. */
export function encodeEvent(event: MarketEvent): Message {
  return { key: event.asset, value: JSON.stringify(event), headers: { 'schema-version': schemaVersion } };
}

/** The event a message of `topic` carries, or undefined when it is not JSON or fails the topic's schema. */
export function decodeEvent<T extends Topic>(topic: T, value: Buffer | string | null | undefined): EventOfTopic[T] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value?.toString() ?? '');
  } catch {
    return undefined;
  }
  const result = schemaOfTopic[topic].safeParse(parsed);
  return result.success ? (result.data as EventOfTopic[T]) : undefined;
}

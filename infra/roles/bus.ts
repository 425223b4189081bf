import type { Bus } from '../bus/bus.ts';
import { createKafkaBus } from '../bus/kafkaBus.ts';
import { createMemoryBus } from '../bus/memoryBus.ts';
import { observeBus } from '../metrics.ts';
import type { RoleContext } from './context.ts';

/** How long /ready stays failing after the bus refused an event. */
const droppedRecentlyMs = 60_000;

/** Kafka when KAFKA_BROKERS is set, else the bounded in-process bus; measured, with its readiness check. */
export async function openRoleBus({ config, log, life, metrics, checks }: RoleContext, splitRole: boolean): Promise<Bus> {
  const bus = config.KAFKA_BROKERS
    ? await createKafkaBus({ brokers: config.KAFKA_BROKERS, sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS, log: log.child({ part: 'bus' }) })
    : createMemoryBus({ log: log.child({ part: 'bus' }), maxRecordsPerTopic: config.BUS_MAX_RECORDS_PER_TOPIC, maxBytesPerTopic: config.BUS_MAX_MB_PER_TOPIC * 1024 * 1024 });
  log.info({ bus: bus.description }, 'bus ready');
  if (splitRole && !config.KAFKA_BROKERS) log.warn('KAFKA_BROKERS is unset: the in-process bus reaches nothing outside this process');
  life.add('bus', 'base', () => bus.close());
  observeBus(metrics, bus);
  let lastDropped = { count: bus.stats().dropped, at: 0 };
  checks.push({
    name: 'bus',
    check: () => {
      const stats = bus.stats();
      if (stats.dropped > lastDropped.count) lastDropped = { count: stats.dropped, at: Date.now() };
      const droppedRecently = Date.now() - lastDropped.at < droppedRecentlyMs;
      const lag = Object.fromEntries(stats.lags.map((l) => [`${l.group}/${l.topic}`, l.records]));
      return { ok: !droppedRecently, ...(droppedRecently ? { reason: 'the bus refused events in the last minute' } : {}), dropped: stats.dropped, lag };
    },
  });
  return bus;
}

import { createHash } from 'node:crypto';
import type { BusRecord } from '../infra/bus/bus.ts';
import type { Topic } from '../infra/events.ts';

/** Records of one bus partition, first to last offset (both included). */
export interface OffsetRange {
  topic: Topic;
  partition: number;
  first: number;
  last: number;
}

/**
 * What one insert of a deduping sink carries: every buffered record of its ranges, and the
 * deduplication token of the insert. The token is a function of the ranges and of the records'
 * identities alone, so whoever inserts the same records of the same ranges sends the same token,
 * and the engine keeps whichever insert lands first.
 */
export interface Slice<T extends Topic> {
  ranges: OffsetRange[];
  records: BusRecord<T>[];
  token: string;
  /** Inserted before (by this member, which failed to learn the outcome, or by a member now gone). */
  repeat: boolean;
}

/** A slice whose insert may have landed: the next insert of its partitions repeats it exactly. */
export interface Repeat {
  ranges: OffsetRange[];
}

export const partitionKey = (topic: string, partition: number) => `${topic}/${partition}`;

/** The token of a slice: its table, its ranges and, in offset order, the identity of each of its records. */
export function sliceToken(table: string, ranges: readonly OffsetRange[], keys: readonly string[]): string {
  const hash = createHash('sha256').update(table);
  for (const r of ranges) hash.update(`\n${r.topic}/${r.partition}:${r.first}-${r.last}`);
  for (const key of keys) hash.update(`\n${key}`);
  return `${table}:${hash.digest('hex')}`;
}

export interface SlicePlan<T extends Topic> {
  slices: Slice<T>[];
  /** Records held back: a repeat of their partition still lacks records up to its last offset. */
  waiting: BusRecord<T>[];
  /** The repeats that still lack records, in their order. */
  pending: Repeat[];
}

/** Records by topic, partition and offset: the order a slice's token reads them in. */
const canonical = <T extends Topic>(a: BusRecord<T>, b: BusRecord<T>) =>
  a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition || a.offset - b.offset;

/** Offsets in order, per partition. */
function byPartition<T extends Topic>(records: readonly BusRecord<T>[]): Map<string, BusRecord<T>[]> {
  const out = new Map<string, BusRecord<T>[]>();
  for (const r of records) {
    const key = partitionKey(r.topic, r.partition);
    const list = out.get(key);
    if (list) list.push(r);
    else out.set(key, [r]);
  }
  for (const list of out.values()) list.sort((a, b) => a.offset - b.offset);
  return out;
}

const rangeOf = <T extends Topic>(records: readonly BusRecord<T>[]): OffsetRange => ({
  topic: records[0]!.topic,
  partition: records[0]!.partition,
  first: records[0]!.offset,
  last: records.at(-1)!.offset,
});

/**
 * Cuts buffered records into the slices to insert, in order. Repeats come first, each only once
 * every partition it spans holds records up to its last offset (until then the partition's
 * records wait); the rest of each partition follows, one slice per partition (`perPartition`:
 * another member may take over any partition alone) or one slice for all.
 */
export function planSlices<T extends Topic>(
  records: readonly BusRecord<T>[],
  repeats: readonly Repeat[],
  perPartition: boolean,
  tokenOf: (ranges: readonly OffsetRange[], records: readonly BusRecord<T>[]) => string,
): SlicePlan<T> {
  const parts = byPartition(records);
  const blocked = new Set<string>();
  const slices: Slice<T>[] = [];
  const pending: Repeat[] = [];
  for (const repeat of repeats) {
    const keys = repeat.ranges.map((r) => partitionKey(r.topic, r.partition));
    const complete = repeat.ranges.every((r, i) => !blocked.has(keys[i]!) && (parts.get(keys[i]!)?.at(-1)?.offset ?? -1) >= r.last);
    if (!complete) {
      for (const key of keys) blocked.add(key);
      pending.push(repeat);
      continue;
    }
    const taken: BusRecord<T>[] = [];
    repeat.ranges.forEach((r, i) => {
      const list = parts.get(keys[i]!)!;
      taken.push(...list.filter((x) => x.offset >= r.first && x.offset <= r.last));
      parts.set(keys[i]!, list.filter((x) => x.offset > r.last));
    });
    taken.sort(canonical);
    if (taken.length > 0) slices.push({ ranges: repeat.ranges, records: taken, token: tokenOf(repeat.ranges, taken), repeat: true });
  }
  const waiting: BusRecord<T>[] = [];
  const rest: BusRecord<T>[][] = [];
  for (const [key, list] of parts) {
    if (list.length === 0) continue;
    if (blocked.has(key)) waiting.push(...list);
    else rest.push(list);
  }
  const groups = perPartition ? rest : rest.length > 0 ? [rest.flat().sort(canonical)] : [];
  for (const group of groups) {
    const ranges = [...byPartition(group).values()].map(rangeOf);
    slices.push({ ranges, records: group, token: tokenOf(ranges, group), repeat: false });
  }
  return { slices, waiting, pending };
}

import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers the priority of the calling thread alone to `nice`, or leaves it where it is lower
 * already (raising it needs privileges). On Linux each thread has its own nice value, set with
 * setpriority on the thread's id, which /proc/thread-self names. Returns the thread's nice value
 * now, or undefined where this cannot be done (another system): the thread keeps the process's.
 */
export function lowerThreadPriority(nice: number): number | undefined {
  let threadId: number;
  try {
    threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return undefined;
  }
  const now = Math.max(getPriority(threadId), nice);
  setPriority(threadId, now);
  return now;
}

import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers the priority of the calling thread alone to `nice`, or leaves it where it is lower
 * already (raising it needs privileges). On Linux each thread has its own nice value, set with
 * setpriority on the thread's id, which /proc/thread-self names. Returns the thread's nice value
 * now, or undefined where this cannot be done (another system): the thread keeps the process's.
 */
export function lowerThreadPriority(nice: number): number | undefined {
  const threadId = currentThreadId();
  if (threadId === undefined) return undefined;
  const now = Math.max(getPriority(threadId), nice);
  setPriority(threadId, now);
  return now;
}

/** The calling thread's Linux thread id (/proc/thread-self), or undefined on another system. */
export function currentThreadId(): number | undefined {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return undefined;
  }
}

/**
 * Gives thread `threadId` (any thread of this process) the process's priority back, the nice value
 * of its main thread: for work that must not wait behind the rest, such as a stop, which the
 * shutdown deadline times. Returns the thread's nice value now, or undefined where that is not
 * allowed (lowering a nice value needs CAP_SYS_NICE or RLIMIT_NICE): the thread keeps its priority.
 */
export function restoreThreadPriority(threadId: number): number | undefined {
  try {
    const processNice = getPriority(process.pid);
    setPriority(threadId, processNice);
    return processNice;
  } catch {
    return undefined;
  }
}

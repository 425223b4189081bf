// The quota's window as the README defines it (a fixed hour from the key's first request; spec
// section 8 leaves fixed or sliding open), for tests whose requests cross a real clock (Redis,
// other processes): the x-ratelimit-reset a request may carry, from when it and the first
// request of the window were sent and answered. A window off by a minute falls outside.
export const quotaWindowMs = 3_600_000;

/** When a request was sent and its answer received (ms): it was counted in between. */
export interface RequestTiming {
  sentAt: number;
  receivedAt: number;
}

/** The lowest and highest x-ratelimit-reset (whole seconds left, rounded up) the timings allow. */
export function resetBounds(first: RequestTiming, request: RequestTiming): [min: number, max: number] {
  return [Math.ceil((first.sentAt + quotaWindowMs - request.receivedAt) / 1000), Math.ceil((first.receivedAt + quotaWindowMs - request.sentAt) / 1000)];
}

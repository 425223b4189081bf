import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';

/**
 * The operator endpoints are for the operator's tools (Prometheus, a load balancer, curl), not for
 * web pages. A page open in a browser on the operator's host could otherwise read them: "loopback
 * only" is no boundary for a browser, which connects from loopback itself. So these paths carry no
 * CORS header, refuse a request a browser sent from another site (an `Origin` that is not the
 * request's own host) and a request that names a host we were not told of (DNS rebinding: a page's
 * own domain re-pointed at 127.0.0.1 makes its requests same-origin, but its `Host` is that domain).
 */
export const operatorPaths: readonly string[] = ['/health', '/ready', '/metrics', '/status.json', '/status/candles.json', '/__faults/store'];

export const isOperatorPath = (path: string) => operatorPaths.includes(path);

const loopbackAddresses = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Whether a socket's peer is this host (the check of /metrics without a token and of the fault route). */
export const isLoopback = (address: string | undefined) => loopbackAddresses.has(address ?? '');

export interface OperatorHosts {
  /** Names `Host` may carry besides IP addresses and `localhost` (OPS_ALLOWED_HOSTS, PUBLIC_BASE_URL's host). */
  allowedHosts: readonly string[];
}

/** The host name of a `Host` header, lower case, without port or IPv6 brackets; undefined when it has none. */
function hostName(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed) return bracketed[1]!.toLowerCase();
  return host.replace(/:\d+$/, '').toLowerCase();
}

/** Why a request may not reach an operator endpoint, or undefined when it may. */
export function operatorRefusal(req: Pick<Request, 'get'>, hosts: OperatorHosts): string | undefined {
  const host = req.get('host');
  const name = hostName(host);
  // An address cannot be re-pointed; a name can, unless the operator named it.
  if (name === undefined || !(isIP(name) !== 0 || name === 'localhost' || hosts.allowedHosts.includes(name))) {
    return `Host ${JSON.stringify(host ?? '')} is not one the operator endpoints answer to (an IP address, localhost or OPS_ALLOWED_HOSTS)`;
  }
  const origin = req.get('origin');
  if (origin !== undefined && (!URL.canParse(origin) || new URL(origin).host.toLowerCase() !== host!.toLowerCase())) {
    return 'the operator endpoints do not answer requests from other sites (Origin)';
  }
  return undefined;
}

/** Refuses, with 403 and the error shape, what `operatorRefusal` refuses. */
export function operatorOnly(hosts: OperatorHosts): RequestHandler {
  return (req, res, next) => {
    const refusal = operatorRefusal(req, hosts);
    if (refusal === undefined) return next();
    res.status(403).json({ error: { code: 'forbidden', message: refusal, status: 403 } });
  };
}

/** Whether two secrets are equal, in a time that does not depend on where they differ (or their lengths). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The hosts the operator endpoints answer to, from the configuration. */
export function operatorHostsOf(config: { OPS_ALLOWED_HOSTS: readonly string[]; PUBLIC_BASE_URL?: string | undefined }): OperatorHosts {
  const publicHost = config.PUBLIC_BASE_URL ? new URL(config.PUBLIC_BASE_URL).hostname.toLowerCase() : undefined;
  return { allowedHosts: [...config.OPS_ALLOWED_HOSTS, ...(publicHost ? [publicHost] : [])] };
}

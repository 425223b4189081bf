// Credentials in URLs (http://user:password@host, redis://:password@host) never reach a message:
// configuration errors, error logs and the process's last words all go through these.

const censor = '[redacted]';

/**
 * One URL as given by an operator (in a configuration error), parsable or mistyped: everything
 * between its scheme and its last `@` may be a password, so all of it is replaced.
 */
export function redactUrl(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0) return value;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:?\/*/.exec(value)?.[0] ?? '';
  return `${scheme}${censor}${value.slice(at)}`;
}

/** Free text (an error message, a stack): the userinfo of every `scheme://user:pass@` in it. */
export function redactCredentials(text: string): string {
  // Up to the last @ before the host: a password may hold an unencoded @.
  return text.replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/]*@/g, `$1${censor}@`);
}

import { expect, test } from 'vitest';
import { redactCredentials, redactUrl } from '../redact.ts';

test('redactUrl hides the userinfo of a URL, parsable or mistyped, and leaves one without it as it is', () => {
  expect(redactUrl('http://default:s3cret@clickhouse:8123/')).toBe('http://[redacted]@clickhouse:8123/');
  expect(redactUrl('redis://:s3cret@redis:6379')).toBe('redis://[redacted]@redis:6379');
  expect(redactUrl('http//default:s3cret@clickhouse:8123')).toBe('http//[redacted]@clickhouse:8123');
  expect(redactUrl('default:s3cret@clickhouse')).toBe('default:[redacted]@clickhouse');
  expect(redactUrl('http://clickhouse:8123')).toBe('http://clickhouse:8123');
  expect(redactUrl('http://default:s3@cret@clickhouse:8123')).toBe('http://[redacted]@clickhouse:8123');
});

test('redactCredentials hides the userinfo of every URL in a text', () => {
  expect(redactCredentials('connect to redis://u:s3cret@a:1 failed, then http://x:y@b:2/p')).toBe('connect to redis://[redacted]@a:1 failed, then http://[redacted]@b:2/p');
});

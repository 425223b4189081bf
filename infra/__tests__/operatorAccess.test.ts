import { expect, test } from 'vitest';
import { isLoopback, operatorHostsOf, operatorRefusal, sameSecret } from '../operatorAccess.ts';

const request = (headers: Record<string, string>) => ({ get: (name: string) => headers[name.toLowerCase()] }) as never;
const hosts = { allowedHosts: ['mds.internal'] };

test('Host: IP addresses (v4, v6, with a port), localhost and the names the operator gave; nothing else', () => {
  for (const host of ['127.0.0.1', '127.0.0.1:8080', '10.0.0.5:8080', '[::1]:8080', '[::1]', 'localhost:8080', 'LOCALHOST', 'mds.internal:9000', 'MDS.internal'])
    expect(operatorRefusal(request({ host }), hosts), host).toBeUndefined();
  // A rebinding page's own domain, one that merely ends like an allowed one, a name with a port, none at all.
  for (const host of ['evil.example', 'evil.example:8080', 'x.mds.internal', 'mds.internal.evil.example', 'localhost.evil.example', '127.0.0.1.nip.io'])
    expect(operatorRefusal(request({ host }), hosts), host).toContain('not one the operator endpoints answer to');
  expect(operatorRefusal(request({}), hosts)).toContain('not one the operator endpoints answer to');
});

test('Origin: none (tools) or the request\'s own host (the status page itself); another site, or an opaque origin, refused', () => {
  expect(operatorRefusal(request({ host: '127.0.0.1:8080' }), hosts)).toBeUndefined();
  expect(operatorRefusal(request({ host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' }), hosts)).toBeUndefined();
  for (const origin of ['http://evil.example', 'http://127.0.0.1:9999', 'http://localhost:8080', 'null', 'not a url'])
    expect(operatorRefusal(request({ host: '127.0.0.1:8080', origin }), hosts), origin).toContain('other sites');
});

test('secrets compared whole, whatever their lengths', () => {
  expect(sameSecret('Bearer abc', 'Bearer abc')).toBe(true);
  for (const given of ['Bearer abd', 'Bearer ab', 'Bearer abcd', '', 'bearer abc']) expect(sameSecret(given, 'Bearer abc'), given).toBe(false);
});

test('the allowed names: OPS_ALLOWED_HOSTS and the host of PUBLIC_BASE_URL', () => {
  expect(operatorHostsOf({ OPS_ALLOWED_HOSTS: ['a.internal'], PUBLIC_BASE_URL: 'https://API.example.com:8443/base' })).toEqual({ allowedHosts: ['a.internal', 'api.example.com'] });
  expect(operatorHostsOf({ OPS_ALLOWED_HOSTS: [], PUBLIC_BASE_URL: undefined })).toEqual({ allowedHosts: [] });
});

test('loopback peers: IPv4, IPv6 and IPv4 mapped into IPv6; nothing else', () => {
  for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(isLoopback(address), address).toBe(true);
  for (const address of ['10.0.0.5', '::ffff:10.0.0.5', '', undefined]) expect(isLoopback(address), String(address)).toBe(false);
});

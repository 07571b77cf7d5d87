// The App Check key of the site a project serves, read from the Content-Security-Policy its Hosting sends (a
// server on loopback standing in for <id>.web.app), never from web/dist.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_CHECK_SOURCE, checkServedAppCheck } from './site.ts';

// The policies web/plugins/content-security-policy.ts writes for a build without and with a site key.
const WITHOUT = "default-src 'self'; script-src 'self' 'sha256-x'; frame-ancestors 'none'";
const WITH = `default-src 'self'; script-src 'self' 'sha256-x' ${APP_CHECK_SOURCE} https://www.gstatic.com/recaptcha/; frame-src ${APP_CHECK_SOURCE}`;
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/gone') return res.writeHead(404).end();
    const policy = req.url === '/with-key' ? WITH : WITHOUT;
    res.writeHead(200, { 'content-security-policy': policy }).end('<html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the site a project serves', () => {
  const check = (path: string, enforce = false) =>
    checkServedAppCheck(`${base}${path}`, { local: false, enforce });

  it('passes a served build with an App Check key, whatever web/dist holds', async () => {
    expect((await check('/with-key')).outcome).toBe('pass');
    expect((await check('/with-key', true)).outcome).toBe('pass');
  });

  it('fails a served build without a key, saying every callable is refused when App Check is enforced', async () => {
    const without = await check('/without');
    expect(without.outcome).toBe('fail');
    expect(without.fix).toContain('VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY');
    const enforced = await check('/without', true);
    expect(enforced).toMatchObject({ outcome: 'fail' });
    expect(enforced.detail).toContain('ENFORCE_APP_CHECK=true: every sign-up and sync is refused');
  });

  it('cannot tell when no site answers, and on the local stack', async () => {
    expect((await check('/gone')).outcome).toBe('cannot tell');
    expect((await checkServedAppCheck('http://127.0.0.1:9/', { local: false, enforce: false })).outcome).toBe(
      'cannot tell',
    );
    expect((await checkServedAppCheck(base, { local: true, enforce: true })).outcome).toBe('cannot tell');
  });
});

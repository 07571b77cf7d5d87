// The relay connection's TLS policy: STARTTLS required for smtp:// to any host but loopback, whatever the URL's
// query says, and the local stack's plain outbox on 127.0.0.1 still reachable.
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORDS, passwordPieces as pieces } from '../../test-support/relay-passwords';
import { startOutbox } from '../../test-support/smtp';
import { smtpRefusal } from '../delivery/deliver-thank-you';
import { buildThankYouMessage } from './thank-you-message';
import {
  isLoopbackHost,
  SmtpUrlError,
  smtpOptions,
  smtpTransport,
  smtpUrlOptions,
  UNREADABLE_SMTP_URL,
  withTlsPolicy,
} from './transport';

const message = buildThankYouMessage({
  to: 'kid@example.com',
  from: 'GOODY <hello@goody.example>',
  subscriptionType: 'updates',
  recipientHash: 'a'.repeat(32),
  unsubscribeUrl: 'https://us-central1-goody.cloudfunctions.net/unsubscribe?a=x&t=y',
});

describe('the TLS policy', () => {
  it('knows loopback hosts', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]', undefined]) {
      expect(isLoopbackHost(host), String(host)).toBe(true);
    }
    for (const host of ['smtp.example.com', '10.0.0.1', '192.0.2.2', 'localhost.example.com', '::2']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('requires STARTTLS for smtp:// to a remote relay, even when the URL asks to skip it', async () => {
    const options = smtpOptions(
      'smtp://user:p%40ss@smtp.example.com:587?ignoreTLS=true&requireTLS=false&tls.rejectUnauthorized=false',
    );
    expect(options).toMatchObject({
      host: 'smtp.example.com',
      port: 587,
      secure: false,
      requireTLS: true,
      ignoreTLS: false,
      auth: { user: 'user', pass: 'p@ss' },
      tls: { rejectUnauthorized: true },
      connectionTimeout: 10_000,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  });

  it('keeps smtps:// on implicit TLS and lets a loopback relay speak plain SMTP', async () => {
    expect(smtpOptions('smtps://u:p@smtp.example.com:465')).toMatchObject({
      secure: true,
      ignoreTLS: false,
    });
    const local = smtpOptions('smtp://127.0.0.1:2525');
    expect(local.secure).toBe(false);
    expect(local.requireTLS).toBeUndefined();
    expect(withTlsPolicy({ host: 'localhost', secure: false })).toEqual({ host: 'localhost', secure: false });
    // A well-known service goes to that service's host, whatever host the URL names.
    expect(withTlsPolicy({ host: '127.0.0.1', service: 'gmail' })).toMatchObject({ requireTLS: true });
  });
});

describe('sending', () => {
  it('sends through the plain loopback outbox (the local stack)', async () => {
    const outbox = await startOutbox();
    try {
      const transport = await smtpTransport(outbox.url);
      expect((await transport.send(message)).accepted).toEqual(['kid@example.com']);
      const [stored] = await outbox.messages();
      expect(stored?.headers['list-id']).toBe('GOODY pre-launch list <prelaunch.goody.example>');
    } finally {
      await outbox.stop();
    }
  });

  // A relay that does not offer STARTTLS, on this machine's own non-loopback address: what a stripped offer
  // looks like to the client. Skipped on a machine with no such address.
  const address = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
  describe.skipIf(!address)('a remote relay without STARTTLS', () => {
    let server: SMTPServer;
    let port: number;
    const received: string[] = [];
    beforeAll(async () => {
      server = new SMTPServer({
        secure: false,
        disabledCommands: ['STARTTLS'],
        allowInsecureAuth: true,
        authOptional: true,
        logger: false,
        onAuth(auth, _session, callback) {
          received.push(`AUTH ${auth.username}`);
          callback(null, { user: auth.username });
        },
        onData(stream, _session, callback) {
          stream.resume();
          stream.on('end', () => {
            received.push('DATA');
            callback();
          });
        },
      });
      await new Promise<void>((resolve) => server.listen(0, address, resolve));
      port = (server.server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('is refused before the password or the message is sent, as a failure to retry, not a refused address', async () => {
      const transport = await smtpTransport(`smtp://relay-user:relay-pass@${address}:${port}`);
      const error = await transport.send(message).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/STARTTLS/);
      expect(error).toMatchObject({ code: 'ETLS' });
      // The thank-you worker takes it for our setup (the part waits and is retried), never the recipient's.
      expect(smtpRefusal(error)).toBe('setup');
      expect(received).toEqual([]);
    });

    it('and one whose certificate does not verify is refused too, even when the URL says not to verify', async () => {
      // smtp-server's own certificate: self-signed, for localhost.
      const impostor = new SMTPServer({
        secure: false,
        authOptional: true,
        logger: false,
        onAuth(auth, _session, callback) {
          received.push(`AUTH ${auth.username}`);
          callback(null, { user: auth.username });
        },
      });
      await new Promise<void>((resolve) => impostor.listen(0, address, resolve));
      try {
        const { port: impostorPort } = impostor.server.address() as AddressInfo;
        const transport = await smtpTransport(
          `smtp://relay-user:relay-pass@${address}:${impostorPort}?tls.rejectUnauthorized=false`,
        );
        await expect(transport.send(message)).rejects.toThrow(/certificate/i);
        expect(received).toEqual([]);
      } finally {
        await new Promise<void>((resolve) => impostor.close(() => resolve()));
      }
    });
  });
});

describe('SMTP_URL', () => {
  it('is read with the WHATWG parser: percent-encoded user and password given back whole, as nodemailer reads a URL', () => {
    for (const password of PASSWORDS) {
      const url = `smtps://AKIA%2BUSER:${encodeURIComponent(password)}@smtp.example.com:465?service=&tls.minVersion=TLSv1.2`;
      expect(smtpUrlOptions(url), password).toMatchObject({
        host: 'smtp.example.com',
        port: 465,
        secure: true,
        auth: { user: 'AKIA+USER', pass: password },
        tls: { minVersion: 'TLSv1.2' },
      });
    }
    expect(smtpUrlOptions('smtp://[::1]:2525?pool=true&maxConnections=2')).toEqual({
      host: '::1',
      port: 2525,
      secure: false,
      pool: true,
      maxConnections: 2,
    });
  });

  it('that cannot be read is refused with the fix, and with no part of the URL', () => {
    const unreadable = [
      ...PASSWORDS.filter((password) => /[/#?%]/.test(password)).map(
        (password) => `smtps://AKIAEXAMPLE:${password}@127.0.0.1:465`,
      ),
      'smtps://AKIAEXAMPLE:Hy6cLp3dKs9f@127.0.0.1:46x5',
      'smtps://AKIAEXAMPLE:Hy6cLp3dKs9f@127.0.0.1:99999',
    ];
    for (const url of unreadable) {
      let caught: unknown;
      try {
        const options = smtpUrlOptions(url);
        // Read at all, it is read as meant: never a host made of the user, never a shortened password.
        expect(options.host, url).toBe('127.0.0.1');
      } catch (error) {
        caught = error;
      }
      if (!caught) continue;
      expect(caught, url).toBeInstanceOf(SmtpUrlError);
      expect((caught as Error).message).toBe(UNREADABLE_SMTP_URL);
      expect(JSON.stringify({ ...(caught as object), stack: (caught as Error).stack })).not.toMatch(
        /AKIAEXAMPLE|Hy6c|Lp3d|127\.0\.0\.1/,
      );
    }
    expect(() => smtpUrlOptions('https://u:p@smtp.example.com')).toThrow(/not https:\/\//);
  });

  it("never reaches stdout, stderr or a log line on the worker's path, Node's own warnings included", async () => {
    const outbox = await startOutbox();
    try {
      const urls = [
        ...PASSWORDS.map((password) => `smtps://AKIAEXAMPLE:${password}@127.0.0.1:465`),
        ...PASSWORDS.map((password) => `smtp://AKIAEXAMPLE:${password}@${outbox.host}:${outbox.port}`),
        ...PASSWORDS.map(
          (password) => `smtp://AKIAEXAMPLE:${encodeURIComponent(password)}@${outbox.host}:${outbox.port}`,
        ),
        `smtps://AKIAEXAMPLE:${PASSWORDS[0]}@127.0.0.1:4x65`,
      ];
      // A child process, so that whatever Node itself prints (a deprecation warning) is caught with the rest;
      // it logs each send's error whole, as a careless log line would.
      const script = `
        const loaded = await import(${JSON.stringify(new URL('./transport.ts', import.meta.url).href)});
        const { smtpTransport } = loaded.default ?? loaded;
        const message = ${JSON.stringify(message)};
        for (const url of JSON.parse(process.env.URLS)) {
          try {
            const sent = await (await smtpTransport(url)).send(message);
            console.log('sent', sent.accepted.length);
          } catch (error) {
            console.error('thank_you.failed', error, JSON.stringify(error));
          }
        }`;
      const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '--eval', script],
          { env: { ...process.env, URLS: JSON.stringify(urls) }, timeout: 60_000 },
          (error, out, err) => (error ? reject(error) : resolve({ stdout: out, stderr: err })),
        ),
      );
      const output = `${stdout}\n${stderr}`;
      // The encoded ones were sent (and the raw ones WHATWG reads as meant: + = : @).
      expect(stdout.match(/^sent 1$/gm)?.length ?? 0).toBeGreaterThanOrEqual(PASSWORDS.length);
      expect(stderr).toContain(UNREADABLE_SMTP_URL);
      expect(output).not.toMatch(/DeprecationWarning|DEP0/);
      for (const password of PASSWORDS) {
        for (const piece of pieces(password)) expect(output, piece).not.toContain(piece);
      }
    } finally {
      await outbox.stop();
    }
  });
});

// The relay connection's TLS policy: STARTTLS required for smtp:// to any host but loopback, whatever the URL's
// query says, and the local stack's plain outbox on 127.0.0.1 still reachable.
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOutbox } from '../../test-support/smtp';
import { smtpRefusal } from '../tasks/deliver-thank-you';
import { buildThankYouMessage } from './thank-you-message';
import { isLoopbackHost, smtpOptions, smtpTransport, withTlsPolicy } from './transport';

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
    const options = await smtpOptions(
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
    expect(await smtpOptions('smtps://u:p@smtp.example.com:465')).toMatchObject({
      secure: true,
      ignoreTLS: false,
    });
    const local = await smtpOptions('smtp://127.0.0.1:2525');
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

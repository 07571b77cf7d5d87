// The relay check against SMTP servers on loopback: one set up as a provider's is (STARTTLS, a login, a
// sender it accepts), and ones that fail each step. Nothing is ever sent: no server sees DATA.
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { type SmtpOutbox, startSmtpOutbox } from '../../stand-ins/smtp/index.ts';
import { checkRelay } from './relay.ts';

const REMOTE = { allowPlainLoopback: false, requireLogin: true };
const FROM = 'GOODY <hello@goody.example>';
// smtp-server's own self-signed certificate: trusted through the URL, which the policy honours on loopback only.
const TRUST_TEST_CERT = 'tls.rejectUnauthorized=false';

let server: SMTPServer | undefined;
let outbox: SmtpOutbox | undefined;
const seen: string[] = [];

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await outbox?.stop();
  server = undefined;
  outbox = undefined;
  seen.length = 0;
});

/** A provider-like relay: login `relay`/`secret`, senders at goody.example only. */
async function startRelay(options: Partial<SMTPServerOptions> = {}): Promise<number> {
  server = new SMTPServer({
    logger: false,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      seen.push(`AUTH ${auth.username}`);
      if (auth.username === 'relay' && auth.password === 'secret') callback(null, { user: 'relay' });
      else
        callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onMailFrom(address, _session, callback) {
      seen.push(`MAIL FROM ${address.address}`);
      if (address.address.endsWith('@goody.example')) callback();
      else callback(Object.assign(new Error('5.7.1 Sender not verified'), { responseCode: 550 }));
    },
    onData(stream, _session, callback) {
      seen.push('DATA');
      stream.resume();
      stream.on('end', () => callback());
    },
    ...options,
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.server.address() as AddressInfo).port;
}

const outcomes = (results: Awaited<ReturnType<typeof checkRelay>>) =>
  results.map((result) => [result.name, result.outcome]);

describe('the SMTP relay', () => {
  it('passes a relay with STARTTLS that accepts our login and sender, and sends nothing', async () => {
    const port = await startRelay();
    const results = await checkRelay(
      `smtp://relay:secret@127.0.0.1:${port}?${TRUST_TEST_CERT}`,
      FROM,
      REMOTE,
    );
    expect(outcomes(results)).toEqual([
      ['SMTP relay: TLS', 'pass'],
      ['SMTP relay: login', 'pass'],
      ['SMTP relay: sender', 'pass'],
    ]);
    expect(results[0]?.detail).toContain('STARTTLS');
    expect(seen).toEqual(['AUTH relay', 'MAIL FROM hello@goody.example']);
  });

  it('passes a relay on implicit TLS (smtps)', async () => {
    const port = await startRelay({ secure: true });
    const results = await checkRelay(
      `smtps://relay:secret@127.0.0.1:${port}?${TRUST_TEST_CERT}`,
      FROM,
      REMOTE,
    );
    expect(outcomes(results).map(([, outcome]) => outcome)).toEqual(['pass', 'pass', 'pass']);
    expect(results[0]?.detail).toContain('implicit TLS');
  });

  it('fails a relay without STARTTLS before the password leaves, with the port to use instead', async () => {
    const port = await startRelay({ disabledCommands: ['STARTTLS'], allowInsecureAuth: true });
    const results = await checkRelay(`smtp://relay:secret@127.0.0.1:${port}`, FROM, REMOTE);
    expect(outcomes(results)).toEqual([['SMTP relay: TLS', 'fail']]);
    expect(results[0]?.detail).toContain('does not offer STARTTLS');
    expect(results[0]?.fix).toContain('smtps://user:pass@host:465');
    expect(seen).toEqual([]);
  });

  it('fails a refused login, saying to set SMTP_URL again', async () => {
    const port = await startRelay();
    const results = await checkRelay(`smtp://relay:wrong@127.0.0.1:${port}?${TRUST_TEST_CERT}`, FROM, REMOTE);
    expect(outcomes(results)).toEqual([
      ['SMTP relay: TLS', 'pass'],
      ['SMTP relay: login', 'fail'],
    ]);
    expect(results[1]?.detail).toContain('535');
    expect(results[1]?.detail).not.toContain('wrong');
    expect(results[1]?.fix).toContain('functions:secrets:set SMTP_URL');
  });

  it('fails a sender the relay refuses', async () => {
    const port = await startRelay();
    const results = await checkRelay(
      `smtp://relay:secret@127.0.0.1:${port}?${TRUST_TEST_CERT}`,
      'GOODY <hello@elsewhere.example>',
      REMOTE,
    );
    expect(results[2]).toMatchObject({ name: 'SMTP relay: sender', outcome: 'fail' });
    expect(results[2]?.detail).toContain('550');
    expect(seen).not.toContain('DATA');
  });

  it('fails a relay that cannot be reached, and a URL without a login', async () => {
    const port = await startRelay();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    const down = await checkRelay(`smtps://relay:secret@127.0.0.1:${port}`, FROM, REMOTE);
    expect(down[0]).toMatchObject({ name: 'SMTP relay', outcome: 'fail' });
    expect(down[0]?.detail).toContain('cannot reach');
    expect((await checkRelay(undefined, FROM, REMOTE))[0]?.detail).toBe('SMTP_URL is not set');
  });

  // This machine's own non-loopback address: where the functions' policy verifies the certificate whatever
  // the URL says. Skipped on a machine with no such address.
  const address = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
  it.skipIf(!address)(
    'fails a relay whose certificate does not verify, even when SMTP_URL says not to verify',
    async () => {
      server = new SMTPServer({ logger: false, authOptional: true });
      await new Promise<void>((resolve) => server?.listen(0, address, resolve));
      const { port } = server.server.address() as AddressInfo;
      const results = await checkRelay(
        `smtp://relay:secret@${address}:${port}?${TRUST_TEST_CERT}`,
        FROM,
        REMOTE,
      );
      expect(outcomes(results)).toEqual([['SMTP relay: TLS', 'fail']]);
      expect(results[0]?.detail).toContain('certificate is not valid');
    },
  );

  it('passes the local stack outbox, plain SMTP on loopback, as the functions reach it', async () => {
    outbox = await startSmtpOutbox({ quiet: true });
    const results = await checkRelay(outbox.url, FROM, { allowPlainLoopback: true, requireLogin: false });
    expect(outcomes(results).map(([, outcome]) => outcome)).toEqual(['pass', 'pass', 'pass']);
    expect(results[0]?.detail).toContain('loopback');
    expect(await outbox.messages()).toEqual([]);
  });
});

// The SMTP relay of SMTP_URL, reached as the thank-you worker reaches it (functions/src/mail/transport.ts:
// the same URL parsing and TLS policy) and asked for what a send needs, without sending: the TLS handshake
// (implicit, or STARTTLS required), the login, and MAIL FROM with our sender, then RSET and QUIT.

import SMTPConnection from 'nodemailer/lib/smtp-connection';
import wellKnown from 'nodemailer/lib/well-known';
import { isLoopbackHost, SmtpUrlError, smtpOptions } from '../../functions/src/mail/transport.ts';
import { senderDomain } from './domain.ts';
import { providerOf } from './providers.ts';
import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

export interface RelayCheckOptions {
  /**
   * Allow plain SMTP to a loopback relay, as the functions do (the local stack's outbox). Off for a real
   * project, whose relay is never on loopback: there STARTTLS is demanded of whatever host SMTP_URL names.
   */
  allowPlainLoopback: boolean;
  /** Whether SMTP_URL must carry a login (a real relay always wants one). */
  requireLogin: boolean;
  /** The fix for a relay that cannot be reached, when not the URL's host and port (the local stack: start it). */
  unreachableFix?: string;
  /** Why DNS does not work here (the control lookup failed): a relay not reached is then "cannot tell". */
  offline?: string | null;
}

/** The few internals of SMTPConnection that issue one command and read its reply (no public API sends MAIL FROM alone). */
interface CommandChannel {
  _sendCommand(command: string): void;
  _responseActions: Array<(reply: string) => void>;
}

function command(connection: SMTPConnection, line: string): Promise<string> {
  const channel = connection as unknown as CommandChannel;
  if (typeof channel._sendCommand !== 'function' || !Array.isArray(channel._responseActions)) {
    return Promise.reject(new Error('this nodemailer cannot issue a single SMTP command'));
  }
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    connection.once('error', onError);
    channel._responseActions.push((reply) => {
      connection.off('error', onError);
      resolve(reply);
    });
    channel._sendCommand(line);
  });
}

const where = (options: { host?: string; port?: number }) =>
  `${options.host ?? 'localhost'}:${options.port ?? ''}`;

export async function checkRelay(
  smtpUrl: string | undefined,
  mailFrom: string | undefined,
  options: RelayCheckOptions,
): Promise<CheckResult[]> {
  if (!smtpUrl) {
    return [
      fail(
        'SMTP relay',
        'SMTP_URL is not set',
        'npx firebase functions:secrets:set SMTP_URL --project <id> (smtps://user:pass@smtp.your-provider:465)',
      ),
    ];
  }
  let settings: ReturnType<typeof smtpOptions>;
  try {
    settings = smtpOptions(smtpUrl);
  } catch (error) {
    // SmtpUrlError's message names the fix and holds no part of the URL; nothing else is said of it.
    const said = error instanceof SmtpUrlError ? error.message : 'SMTP_URL cannot be read';
    return [
      fail(
        'SMTP relay',
        said,
        'set SMTP_URL again with its user and password percent-encoded: npx firebase functions:secrets:set SMTP_URL --project <id>',
      ),
    ];
  }
  const loopback = isLoopbackHost(settings.host);
  const plainAllowed = options.allowPlainLoopback && loopback && !settings.service;
  // As nodemailer's transport does: a well-known service (`?service=`) names the host, port and TLS.
  const service = typeof settings.service === 'string' ? wellKnown(settings.service) : false;
  const merged = { ...settings, ...(service || {}) };
  const target = { ...merged, port: merged.port === undefined ? undefined : Number(merged.port) };
  const connectionOptions = {
    ...target,
    ...(target.secure || plainAllowed ? {} : { requireTLS: true, ignoreTLS: false }),
    name: 'goody-doctor',
  };
  const address = where(target);
  const results: CheckResult[] = [];
  const connection = new SMTPConnection(connectionOptions);
  // An error after the checks (the relay hanging up on QUIT) is not a finding.
  connection.on('error', () => {});
  try {
    try {
      await new Promise<void>((resolve, reject) => {
        connection.once('error', reject);
        connection.connect(() => {
          connection.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      return [connectFailure(error, address, Boolean(target.secure), options)];
    }
    if (connection.secure) {
      results.push(
        pass('SMTP relay: TLS', `${address} over ${target.secure ? 'implicit TLS (smtps)' : 'STARTTLS'}`),
      );
    } else {
      results.push(
        pass('SMTP relay: TLS', `${address} in plain SMTP: a loopback relay (the local stack's outbox) only`),
      );
    }

    const auth = settings.auth as { user?: string; pass?: string } | undefined;
    if (auth?.user) {
      try {
        await new Promise<void>((resolve, reject) => {
          connection.login({ user: auth.user ?? '', pass: auth.pass ?? '' }, (error) =>
            error ? reject(error) : resolve(),
          );
        });
        results.push(pass('SMTP relay: login', `the relay accepts SMTP_URL's user`));
      } catch (error) {
        results.push(
          fail(
            'SMTP relay: login',
            `the relay refuses SMTP_URL's user and password: ${responseOf(error)}`,
            "set SMTP_URL again with the provider's SMTP credentials: npx firebase functions:secrets:set SMTP_URL --project <id>",
          ),
        );
        return results;
      }
    } else if (options.requireLogin) {
      results.push(
        fail(
          'SMTP relay: login',
          'SMTP_URL carries no user and password',
          "set SMTP_URL with the provider's SMTP credentials: smtps://user:pass@host:465",
        ),
      );
    } else {
      results.push(pass('SMTP relay: login', 'no login in SMTP_URL (the local outbox takes none)'));
    }

    const sender = mailFrom ? (/<([^<>\s]+@[^<>\s]+)>\s*$/.exec(mailFrom)?.[1] ?? mailFrom.trim()) : '';
    if (!sender || !senderDomain(sender)) {
      results.push(
        cannotTell('SMTP relay: sender', 'MAIL_FROM holds no address to offer at MAIL FROM', 'set MAIL_FROM'),
      );
      return results;
    }
    const reply = await command(connection, `MAIL FROM:<${sender}>`);
    if (reply.startsWith('2')) {
      results.push(
        pass(
          'SMTP relay: sender',
          `the relay accepts ${sender} at MAIL FROM (nothing was sent); that does not prove it delivers to anyone: some relays (Amazon SES) check the sender after DATA, and a sandbox or an account pending approval accepts MAIL FROM and refuses every recipient but your own`,
        ),
      );
    } else if (reply.startsWith('4')) {
      results.push(
        cannotTell('SMTP relay: sender', `the relay deferred ${sender}: ${reply.trim()}`, 'run it again'),
      );
    } else {
      results.push(
        fail(
          'SMTP relay: sender',
          `the relay refuses ${sender} as sender: ${reply.trim()}`,
          "verify MAIL_FROM's address or domain with the SMTP provider, or set MAIL_FROM to one it lets you send from",
        ),
      );
    }
    await command(connection, 'RSET').catch(() => '');
    const provider = providerOf(settings.host);
    if (provider) {
      results.push(
        cannotTell(
          `SMTP relay: ${provider.name}`,
          `whether ${provider.name} sends to anyone is not told over SMTP: ${provider.sandbox}`,
          `look there; turn off its click tracking (${provider.clickTracking}); its bounce domain is ${provider.bounce}`,
        ),
      );
    }
    return results;
  } catch (error) {
    results.push(cannotTell('SMTP relay', `the conversation broke off: ${messageOf(error)}`, 'run it again'));
    return results;
  } finally {
    try {
      connection.quit();
      setTimeout(() => connection.close(), 1_000).unref();
    } catch {
      // Never connected (the host did not resolve): nothing to say goodbye to.
      connection.close();
    }
  }
}

function responseOf(error: unknown): string {
  const response = (error as { response?: unknown }).response;
  return typeof response === 'string' ? response.trim() : messageOf(error);
}

function connectFailure(
  error: unknown,
  address: string,
  secure: boolean,
  options: Pick<RelayCheckOptions, 'unreachableFix' | 'offline'>,
): CheckResult {
  const code = String((error as { code?: unknown }).code ?? '');
  const message = messageOf(error);
  if (code === 'ETLS' || /STARTTLS/i.test(message)) {
    return fail(
      'SMTP relay: TLS',
      `${address} does not offer STARTTLS, so the password and the mail would cross the network in clear`,
      "use the provider's TLS port: smtps://user:pass@host:465, or the port where it offers STARTTLS (587)",
    );
  }
  if (/certificate|self[- ]signed|altnames|CERT_/i.test(message) || code.startsWith('CERT')) {
    return fail(
      'SMTP relay: TLS',
      `${address}'s certificate is not valid for that name: ${message}`,
      "use the host name the provider's certificate is for",
    );
  }
  if (secure && /wrong version number|EPROTO|packet length/i.test(`${code} ${message}`)) {
    return fail(
      'SMTP relay: TLS',
      `${address} does not speak TLS from the first byte`,
      'use smtp://…:587 (STARTTLS) for this port, or the port the provider gives for smtps (465)',
    );
  }
  if (options.offline) {
    return cannotTell(
      'SMTP relay',
      `cannot reach ${address} (${message}), and ${options.offline}: the network, not SMTP_URL, may be the cause`,
      'run it where DNS and the network work',
    );
  }
  return fail(
    'SMTP relay',
    `cannot reach ${address}: ${message}`,
    options.unreachableFix ?? "check SMTP_URL's host and port against the provider's SMTP settings",
  );
}

import type { MailMessage } from './thank-you-message';

export interface SentMail {
  messageId: string;
  accepted: string[];
  rejected: string[];
}

/** What the thank-you handler needs from a mailer; nodemailer's SMTP transport, adapted. */
export interface MailTransport {
  send(message: MailMessage): Promise<SentMail>;
}

/**
 * Bounded waits, so a mail server that hangs makes the send fail well inside the function's timeout
 * (and inside the thank-you lease) instead of holding it until the platform kills the instance.
 */
export const SMTP_TIMEOUTS = {
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 20_000,
} as const;

/** The connection settings of an SMTP URL that the TLS policy reads (nodemailer's parsed URL). */
export interface SmtpTlsSettings {
  host?: string;
  secure?: boolean;
  requireTLS?: boolean;
  ignoreTLS?: boolean;
  /** A well-known service (`?service=`): nodemailer then connects to that service's host, not `host`. */
  service?: string;
  /** Options for Node's TLS; the URL can set them as `tls.<name>=`. */
  tls?: { [key: string]: unknown };
}

/** A host name or address that never leaves the machine: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string | undefined): boolean {
  // nodemailer connects to localhost when the URL names no host.
  const name = (host ?? 'localhost')
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    /^127(\.\d{1,3}){3}$/.test(name) ||
    name === '::1' ||
    name === '0:0:0:0:0:0:0:1'
  );
}

/**
 * The TLS policy of the relay connection, applied over whatever the URL says (its query can carry
 * nodemailer options such as `ignoreTLS=true` or `tls.rejectUnauthorized=false`):
 *
 * - `smtps://` (secure): TLS from the first byte.
 * - `smtp://`: STARTTLS is required (`requireTLS`). nodemailer's default only upgrades when the server
 *   offers STARTTLS, so an attacker on the path who strips the offer would read the relay's password and
 *   the recipient in clear; required, the send fails instead.
 * - Either way the relay's certificate is verified: TLS to an impostor protects nothing.
 * - A loopback relay (the local stack's SMTP stand-in on 127.0.0.1) is taken as the URL says, plain SMTP
 *   included, since nothing on the path can strip what never leaves the machine. It is the only opt-out.
 */
export function withTlsPolicy<T extends SmtpTlsSettings>(settings: T): T {
  if (isLoopbackHost(settings.host) && !settings.service) return settings;
  const tls = { ...settings.tls, rejectUnauthorized: true };
  if (settings.secure) return { ...settings, ignoreTLS: false, tls };
  return { ...settings, requireTLS: true, ignoreTLS: false, tls };
}

/**
 * nodemailer's options for an SMTP URL as nodemailer's own parseConnectionUrl read it: under the TLS
 * policy, with the bounded waits and no file or URL access from message content. Shared by the thank-you
 * worker and the operator's launch check (ops/doctor/), so the check connects as a deployed function does.
 */
export function smtpConnectionOptions<T extends SmtpTlsSettings>(parsedUrl: T) {
  return {
    ...withTlsPolicy(parsedUrl),
    ...SMTP_TIMEOUTS,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

/** smtpConnectionOptions of the URL, nodemailer's parser imported on first use, as nodemailer itself is. */
export async function smtpOptions(smtpUrl: string) {
  const { parseConnectionUrl } = await import('nodemailer/lib/shared');
  return smtpConnectionOptions(parseConnectionUrl(smtpUrl));
}

const transports = new Map<string, Promise<MailTransport>>();

/**
 * An SMTP transport for SMTP_URL, made once per URL and instance. nodemailer is imported here, on the
 * first mail, not when the functions load: most invocations of this codebase never send one.
 */
export function smtpTransport(smtpUrl: string): Promise<MailTransport> {
  let transport = transports.get(smtpUrl);
  if (!transport) {
    transport = createSmtpTransport(smtpUrl);
    transports.set(smtpUrl, transport);
    transport.catch(() => transports.delete(smtpUrl));
  }
  return transport;
}

async function createSmtpTransport(smtpUrl: string): Promise<MailTransport> {
  const { createTransport } = await import('nodemailer');
  const transporter = createTransport(await smtpOptions(smtpUrl));
  return {
    async send(message) {
      const info = await transporter.sendMail(message);
      return {
        messageId: String(info.messageId ?? message.messageId),
        accepted: (info.accepted ?? []).map(String),
        rejected: (info.rejected ?? []).map(String),
      };
    },
  };
}

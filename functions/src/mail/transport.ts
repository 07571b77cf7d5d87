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

/** nodemailer's SMTP options as an SMTP URL gives them. */
export interface SmtpUrlOptions {
  host?: string;
  secure?: boolean;
  requireTLS?: boolean;
  ignoreTLS?: boolean;
  /** A well-known service (`?service=`): nodemailer then connects to that service's host, not `host`. */
  service?: string;
  /** Options for Node's TLS; the URL can set them as `tls.<name>=`. */
  tls?: { [key: string]: unknown };
  port?: number;
  auth?: { user: string; pass: string };
  [option: string]: unknown;
}

/** Names the fix and no part of the URL, which carries the relay's password into the logs otherwise. */
export const UNREADABLE_SMTP_URL =
  'SMTP_URL cannot be read as smtps://user:password@host:465 or smtp://user:password@host:587 ' +
  '(the port a number, nothing after it but a ?query): percent-encode the user and the password ' +
  '(encodeURIComponent: / as %2F, + as %2B, # as %23, @ as %40, = as %3D, : as %3A, % as %25, ? as %3F)';

/** An SMTP_URL that cannot be read; its message is UNREADABLE_SMTP_URL (or names the scheme), never the URL. */
export class SmtpUrlError extends Error {
  readonly code = 'ESMTPURL';
  constructor(message = UNREADABLE_SMTP_URL) {
    super(message);
    this.name = 'SmtpUrlError';
  }
}

/**
 * nodemailer's options for an SMTP URL, read as nodemailer does but with the WHATWG parser: Node's legacy
 * url.parse prints a warning holding the whole URL, password included. A URL whose parts an unencoded
 * `/ # ? @` would move throws SmtpUrlError.
 */
export function smtpUrlOptions(smtpUrl: string): SmtpUrlOptions {
  // Checked first: the parser's error would carry the input (`error.input`).
  if (!URL.canParse(smtpUrl.trim())) throw new SmtpUrlError();
  const url = new URL(smtpUrl.trim());
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new SmtpUrlError(
      `SMTP_URL must start with smtps:// (TLS, port 465) or smtp:// (STARTTLS, port 587), not ${url.protocol.slice(0, 10)}//`,
    );
  }
  if (
    !url.hostname ||
    (url.pathname !== '' && url.pathname !== '/') ||
    url.hash ||
    url.search.includes('@')
  ) {
    throw new SmtpUrlError();
  }
  const options: SmtpUrlOptions = {
    secure: url.protocol === 'smtps:',
    host: url.hostname.replace(/^\[|\]$/g, ''),
  };
  if (url.port) options.port = Number(url.port);
  if (url.username || url.password) {
    try {
      options.auth = { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
    } catch {
      throw new SmtpUrlError();
    }
  }
  for (const [key, raw] of url.searchParams) {
    const value: unknown =
      raw === 'true'
        ? true
        : raw === 'false'
          ? false
          : raw !== '' && !Number.isNaN(Number(raw))
            ? Number(raw)
            : raw;
    if (key.startsWith('tls.')) options.tls = { ...options.tls, [key.slice(4)]: value };
    else if (!key.includes('.') && !(key in options)) options[key] = value;
  }
  return options;
}

/** A host name or address that never leaves the machine: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string | undefined): boolean {
  // nodemailer connects to localhost when the URL names no host.
  const name = (host ?? 'localhost')
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return /^(localhost|.*\.localhost|127(\.\d{1,3}){3}|::1|0:0:0:0:0:0:0:1)$/s.test(name);
}

/**
 * The relay's TLS policy, over whatever the URL's query says: STARTTLS required (an attacker could strip the
 * offer and read the password) and the certificate verified. Only a loopback relay is taken as the URL says.
 */
export function withTlsPolicy(settings: SmtpUrlOptions): SmtpUrlOptions {
  if (isLoopbackHost(settings.host) && !settings.service) return settings;
  const tls = { ...settings.tls, rejectUnauthorized: true };
  if (settings.secure) return { ...settings, ignoreTLS: false, tls };
  return { ...settings, requireTLS: true, ignoreTLS: false, tls };
}

/**
 * The TLS policy, bounded waits (a hanging relay fails the send inside the function's timeout and the
 * thank-you lease), no file or URL access; the launch check connects with the same.
 */
export function smtpOptions(smtpUrl: string) {
  return {
    ...withTlsPolicy(smtpUrlOptions(smtpUrl)),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

const transports = new Map<string, Promise<MailTransport>>();

/** One transport per URL and instance; nodemailer loads on the first mail, which most calls never send. */
export function smtpTransport(smtpUrl: string): Promise<MailTransport> {
  let transport = transports.get(smtpUrl);
  if (!transport) {
    transport = import('nodemailer').then(({ createTransport }) => {
      // An options object, never the URL string: nodemailer would read a string with Node's legacy url.parse.
      const transporter = createTransport(smtpOptions(smtpUrl));
      return {
        async send(message: MailMessage) {
          const info = await transporter.sendMail(message);
          return {
            messageId: String(info.messageId ?? message.messageId),
            accepted: (info.accepted ?? []).map(String),
            rejected: (info.rejected ?? []).map(String),
          };
        },
      };
    });
    transports.set(smtpUrl, transport);
    transport.catch(() => transports.delete(smtpUrl));
  }
  return transport;
}

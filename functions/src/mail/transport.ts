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
  const transporter = createTransport({
    url: smtpUrl,
    ...SMTP_TIMEOUTS,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
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

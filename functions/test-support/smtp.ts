// The SMTP harness of the functions' tests: the outbox stand-in in dev/smtp, on an ephemeral loopback port.

import { type SmtpOutbox, startSmtpOutbox } from '../../dev/smtp/index.ts';

export function startOutbox(): Promise<SmtpOutbox> {
  return startSmtpOutbox({ quiet: true });
}

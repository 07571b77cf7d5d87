// The SMTP harness of the functions' tests: the outbox stand-in in stand-ins/smtp, on an ephemeral loopback port.

import { type SmtpOutbox, startSmtpOutbox } from '../../stand-ins/smtp/index.ts';

export function startOutbox(): Promise<SmtpOutbox> {
  return startSmtpOutbox({ quiet: true });
}

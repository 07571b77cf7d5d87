// --send-test <address>: one real thank-you, built by the functions' own template and sent through SMTP_URL
// under the functions' TLS policy, to the operator's own address; then what to read in its headers.

import { randomBytes } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { buildThankYouMessage, thankYouMessageToken } from '../../functions/src/mail/thank-you-message.ts';
import { SmtpUrlError, smtpOptions } from '../../functions/src/mail/transport.ts';
import { senderDomain } from './domain.ts';
import { type CheckResult, fail, messageOf, pass } from './report.ts';

/** Why one test to your own address proves little, said with every send test. */
export const OUTSIDE_YOUR_DOMAIN =
  "send one more to an address outside MAIL_FROM's domain (a personal Gmail or Outlook address): a relay in its sandbox or pending approval delivers to your own addresses and refuses everyone else's, and only another provider's mailbox shows how strangers' receivers judge the mail";

export const WHAT_TO_READ = [
  'open it and show its original ("Show original" in Gmail, "View source" elsewhere):',
  "SPF, DKIM and DMARC each say PASS; DKIM-Signature d= is MAIL_FROM's domain (or a parent of it)",
  'DKIM-Signature h= lists both List-Unsubscribe and List-Unsubscribe-Post (RFC 8058); if not, ask the provider to sign them',
  'List-Unsubscribe is the one https link, List-Unsubscribe-Post: List-Unsubscribe=One-Click, and a List-Id',
  "the body's links are the unsubscribe link and the mailto contact as sent, not a tracking redirect, and it has no image (turn off the relay's click and open tracking otherwise)",
  'it landed in the inbox, not in spam',
];

export async function sendTest(
  to: string,
  setup: { smtpUrl: string | undefined; mailFrom: string | undefined; unsubscribeUrl: string | undefined },
): Promise<CheckResult> {
  const name = 'send test';
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(to))
    return fail(name, `"${to}" is not an address`, 'give your own address: --send-test you@your-domain');
  if (!setup.smtpUrl || !setup.mailFrom || !setup.unsubscribeUrl) {
    return fail(
      name,
      'SMTP_URL, MAIL_FROM and UNSUBSCRIBE_URL are all needed to send',
      'fix the checks above that say which is missing',
    );
  }
  // A link shaped as a real one that opens to no address: pressing it shows the product's "link doesn't work" page
  // and erases nothing.
  const message = buildThankYouMessage({
    to,
    from: setup.mailFrom,
    subscriptionType: 'updates',
    recipientHash: thankYouMessageToken(randomBytes(16).toString('base64url')),
    unsubscribeUrl: `${setup.unsubscribeUrl}?a=launch-check&t=launch-check`,
  });
  try {
    const transporter = createTransport(smtpOptions(setup.smtpUrl));
    const info = await transporter.sendMail(message);
    transporter.close();
    const rejected = (info.rejected ?? []).map(String);
    if (rejected.length > 0) {
      return fail(
        name,
        `the relay refused the recipient: ${String(info.response ?? '')}`,
        'send to another address of yours',
      );
    }
    return pass(
      name,
      `one thank-you sent to ${to} (${message.messageId}); the relay said: ${String(info.response ?? 'ok')}`,
      senderDomain(to) === senderDomain(setup.mailFrom)
        ? [OUTSIDE_YOUR_DOMAIN, ...WHAT_TO_READ]
        : [...WHAT_TO_READ, OUTSIDE_YOUR_DOMAIN],
    );
  } catch (error) {
    return fail(
      name,
      error instanceof SmtpUrlError
        ? error.message
        : `the relay did not take the message: ${messageOf(error)}`,
      'fix what the relay checks above fail',
    );
  }
}

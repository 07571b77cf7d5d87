import { createHmac } from 'node:crypto';
import type { SubscriptionType } from '../contract';

export type MailMessage = ReturnType<typeof buildThankYouMessage>;

export interface ThankYouMessageInput {
  to: string;
  /** MAIL_FROM, e.g. `GOODY <hello@goody.example>`. */
  from: string;
  /** Which form the address came from: the greeting differs, the promises do not. */
  subscriptionType: SubscriptionType;
  /** thankYouMessageToken(mailbox key): stable, so a resend is recognisable as one. */
  recipientHash: string;
  /** The one-click unsubscribe link (https), which erases the address everywhere. */
  unsubscribeUrl: string;
}

// The product's voice: warm, plain, and honest about what happens next, for a teen reading it and a
// parent reading over their shoulder. Claims stay within what the landing page says.
const COPY: Record<SubscriptionType, Record<'subject' | 'preheader' | 'heading' | 'intro', string>> = {
  updates: {
    subject: "You're on the GOODY list 🎉",
    preheader: "Thanks for signing up. We'll tell you the moment GOODY launches.",
    heading: "You're on the list!",
    intro:
      "Thanks for signing up for GOODY. You'll be among the first to know when the app launches on iOS and Android.",
  },
  club: {
    subject: 'Welcome to the GOODY Club 🌟',
    preheader: "You're in the Club. We'll tell you the moment GOODY launches.",
    heading: 'Welcome to the GOODY Club!',
    intro:
      "Thanks for joining the GOODY Club. You'll be among the first to know when the app launches on iOS and Android, and the first to hear about badges, style points and outfit challenges.",
  },
};

const ABOUT =
  'GOODY is a marketplace where teens buy and sell the things they love, safely and with a parent in the loop: every account needs a parent’s approval, and payments come with parental controls.';
const PROMISE = 'Until launch we’ll only write when there’s real news. We never sell or share your address.';
const PARENTS =
  'Parents: if your teen signed up and you have a question, just reply to this e-mail. A real person reads every message.';

const MESSAGE_ID_PURPOSE = 'goody-thank-you-message-id-v1';

/**
 * An HMAC keyed by the mailbox key: the Message-ID stays in the recipient's mailbox, so it must reveal
 * nothing of the key that names the records and the logs' handle. Same key, same token: a resend matches.
 */
export function thankYouMessageToken(mailboxKey: string): string {
  if (!mailboxKey) throw new Error('The mailbox key is empty.');
  return createHmac('sha256', Buffer.from(mailboxKey, 'utf8'))
    .update(MESSAGE_ID_PURPOSE, 'utf8')
    .digest('base64url')
    .slice(0, 32);
}

export function senderAddress(from: string): string {
  const match = /<([^<>\s]+@[^<>\s]+)>\s*$/.exec(from);
  return (match?.[1] ?? from).trim();
}

export function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** HTML and a plain-text twin, no images or tracking, a one-click way off and a person to write to. */
export function buildThankYouMessage(input: ThankYouMessageInput) {
  const copy = COPY[input.subscriptionType];
  const contact = senderAddress(input.from);
  const domain = contact.includes('@') ? contact.slice(contact.lastIndexOf('@') + 1) : 'goody.invalid';
  const footer = `You're getting this one-time e-mail because this address was signed up on the GOODY pre-launch page. Didn't sign up, or want off the list? Unsubscribe in one click, which deletes this address from our list:\n${input.unsubscribeUrl}\nOr reply to this e-mail or write to ${contact} and we'll remove you.`;

  const paragraphs = ['Hi there,', copy.intro, ABOUT, PROMISE, PARENTS];
  const text = `${[...paragraphs, 'See you soon,\nThe GOODY team', `--\n${footer}`].join('\n\n')}\n`;

  const c = escapeHtml(contact);
  const paragraph = (content: string) =>
    `<p style="margin:0 0 16px;font-size:16px;line-height:1.5;color:#1f1d2b;">${content}</p>`;
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${escapeHtml(copy.subject)}</title>
</head>
<body style="margin:0;padding:0;background-color:#f6f4fb;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;">
<div style="display:none;max-height:0;overflow:hidden;">${escapeHtml(copy.preheader)}</div>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background-color:#f6f4fb;">
<tr>
<td align="center" style="padding:32px 16px;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background-color:#ffffff;border-radius:16px;">
<tr>
<td style="padding:32px 32px 8px;">
<p style="margin:0 0 24px;font-size:22px;font-weight:800;letter-spacing:0.5px;color:#6b2fd6;">GOODY</p>
<h1 style="margin:0 0 16px;font-size:26px;line-height:1.25;color:#1f1d2b;">${escapeHtml(copy.heading)}</h1>
${[...paragraphs.map(escapeHtml), 'See you soon,<br>The GOODY team'].map(paragraph).join('\n')}
</td>
</tr>
<tr>
<td style="padding:16px 32px 32px;border-top:1px solid #ebe7f5;">
<p style="margin:0;font-size:13px;line-height:1.5;color:#5b5770;">You're getting this one-time e-mail because this address was signed up on the GOODY pre-launch page. Didn't sign up, or want off the list? <a href="${escapeHtml(input.unsubscribeUrl)}" style="color:#6b2fd6;">Unsubscribe in one click</a>, which deletes this address from our list. Or reply to this e-mail or write to <a href="mailto:${c}" style="color:#6b2fd6;">${c}</a> and we'll remove you.</p>
</td>
</tr>
</table>
</td>
</tr>
</table>
</body>
</html>
`;

  return {
    from: input.from,
    to: input.to,
    replyTo: contact,
    subject: copy.subject,
    text,
    html,
    messageId: `<thank-you.${input.recipientHash}@${domain}>`,
    headers: {
      // RFC 8058's one-click POST; https only: a mailto: would land in an inbox nothing processes.
      'List-Unsubscribe': `<${input.unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      // RFC 2919: names the list, so filters and providers' feedback loops group its mail.
      'List-Id': `GOODY pre-launch list <prelaunch.${domain}>`,
      'Auto-Submitted': 'auto-generated',
    },
  };
}

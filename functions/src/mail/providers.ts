/**
 * Mailbox providers: anyone can get an address there, one address is one person's mailbox (no catch-all), and
 * the domain is the provider's, not a sender's. The mail budget gives them no domain share of their own
 * (mail/budget.ts), and the operator's launch check refuses one as the sending domain (ops/doctor/domain.ts).
 */
export const MAILBOX_PROVIDERS: ReadonlySet<string> = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'yahoo.com',
  'ymail.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'pm.me',
  'gmx.com',
  'gmx.net',
  'gmx.de',
  'web.de',
  'mail.com',
  'yandex.com',
  'yandex.ru',
  'zoho.com',
  'fastmail.com',
]);

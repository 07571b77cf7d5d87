// The SMTP providers the launch check knows by their relay's host: what an SMTP conversation cannot tell about
// them (a sandbox or an account pending approval accepts MAIL FROM, and mail to the operator's own addresses,
// and refuses everyone else), where the operator sees it, their click-tracking switch, the SPF include their
// servers send under, and the bounce (Return-Path) domain SPF is evaluated on. docs/deploy.md, "SMTP providers",
// says the same.

export interface SmtpProvider {
  name: string;
  /** The relay hosts it is known by. */
  hosts: RegExp;
  /** The domain an SPF record includes for its servers. */
  spfInclude: string;
  /** Its sandbox or approval state, and where the operator sees it. */
  sandbox: string;
  /** Where its click tracking (rewritten links) is turned off. */
  clickTracking: string;
  /** Its bounce (Return-Path) domain: its own unless set, and where it is set. */
  bounce: string;
  /** The bounce domain for a From domain, where the provider's default is a name under it. */
  bounceDomain?: (fromDomain: string) => string;
}

export const SMTP_PROVIDERS: SmtpProvider[] = [
  {
    name: 'Amazon SES',
    hosts: /^email-smtp(-fips)?\.[a-z0-9-]+\.amazonaws\.com$/,
    spfInclude: 'amazonses.com',
    sandbox:
      'a new SES account is in the sandbox: it sends only to verified addresses, 200 a day (SES console > Account dashboard says "Your Amazon SES account is in the sandbox" until production access is granted)',
    clickTracking:
      'SES rewrites links only when a configuration set has click tracking: SES console > Configuration sets > (yours) > Event destinations, no Clicks or Opens',
    bounce:
      'its own (amazonses.com) unless the identity has a custom MAIL FROM domain (SES console > Identities > your domain > Custom MAIL FROM domain)',
  },
  {
    name: 'Postmark',
    hosts: /^smtp(-broadcasts)?\.postmarkapp\.com$/,
    spfInclude: 'spf.mtasv.net',
    sandbox:
      'a new Postmark account is pending approval: until approved it sends only to addresses on its own verified domains (Postmark > Account says "pending approval"; request it there)',
    clickTracking: 'Postmark > Servers > (yours) > Message stream > Settings > Link tracking: off',
    bounce:
      'its own (pm.mtasv.net) unless a custom Return-Path (pm-bounces.<your domain>, a CNAME to pm.mtasv.net) is verified: Postmark > Sender signatures > your domain',
  },
  {
    name: 'Resend',
    hosts: /^smtp\.resend\.com$/,
    spfInclude: 'amazonses.com',
    sandbox:
      'Resend sends only to the account owner\'s own address until a domain is verified (Resend > Domains: your domain "Verified")',
    clickTracking: 'Resend > Domains > (yours) > Configuration > Click tracking: off',
    bounce: 'send.<your domain>: its MX and SPF records are the ones Resend > Domains lists',
    bounceDomain: (fromDomain) => `send.${fromDomain}`,
  },
  {
    name: 'Mailgun',
    hosts: /^smtp(\.eu)?\.mailgun\.org$/,
    spfInclude: 'mailgun.org',
    sandbox:
      'a sandbox domain (sandbox….mailgun.org) sends only to its authorized recipients, and a free account without a verified domain likewise (Mailgun > Sending > Domains)',
    clickTracking: 'Mailgun > Sending > Domain settings > Tracking > Click tracking: off',
    bounce:
      'the sending domain you added in Mailgun (often mg.<your domain>); its SPF record is the one Mailgun lists',
  },
  {
    name: 'SendGrid',
    hosts: /^smtp\.sendgrid\.net$/,
    spfInclude: 'sendgrid.net',
    sandbox:
      'a new SendGrid account is reviewed before it may send to anyone, and mail from an unauthenticated domain is refused (SendGrid > Settings > Sender Authentication: your domain "Verified")',
    clickTracking: 'SendGrid > Settings > Tracking > Click Tracking: off',
    bounce:
      'em<digits>.<your domain> (automated security: a CNAME to sendgrid.net), listed under Sender Authentication',
  },
  {
    name: 'Brevo',
    hosts: /^smtp-relay\.(brevo|sendinblue)\.com$/,
    spfInclude: 'spf.brevo.com',
    sandbox:
      'a new Brevo account must be validated before its SMTP relay sends to anyone (Brevo > Transactional > Settings shows the SMTP account state)',
    clickTracking: 'Brevo > Transactional > Settings > Tracking: click tracking off',
    bounce: 'its own unless the domain is authenticated (Brevo > Senders, Domains & Dedicated IPs > Domains)',
  },
];

/** The provider whose relay this is, by SMTP_URL's host. */
export function providerOf(host: string | undefined): SmtpProvider | undefined {
  const name = (host ?? '').toLowerCase().replace(/\.$/, '');
  return SMTP_PROVIDERS.find((provider) => provider.hosts.test(name));
}

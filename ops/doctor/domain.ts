// The sending domain of MAIL_FROM, read from DNS as a receiving mail server reads it: mailauth (by nodemailer's
// author) evaluates SPF with the RFC 7208 limits, finds the DMARC record (falling back to the organisational
// domain) and parses a DKIM key record. No record is parsed here by hand.

import { Resolver } from 'node:dns/promises';
import { dmarc, spf } from 'mailauth';
import { getPublicKey } from 'mailauth/lib/tools.js';
import { MAILBOX_PROVIDERS } from '../../functions/src/mail/providers.ts';
import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

/** A DNS lookup as mailauth takes it: TXT answers as arrays of strings. */
export type DnsResolver = (name: string, rrtype: string) => Promise<string[][] | string[]>;

/** A resolver on the given servers (`host` or `host:port`), or on the system's when none is given. */
export function dnsResolver(servers?: string[]): DnsResolver {
  const resolver = new Resolver({ timeout: 5_000, tries: 2 });
  if (servers?.length) resolver.setServers(servers);
  return (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>;
}

/**
 * Mailbox providers anyone can sign up at. A relay cannot send as them with their DKIM key, and their DMARC
 * policy tells receivers to refuse mail from them that did not leave through their own servers.
 */
export const FREE_MAIL_DOMAINS = MAILBOX_PROVIDERS;

/** The domain of `GOODY <hello@goody.app>` or `hello@goody.app`, lower case; null when there is none. */
export function senderDomain(mailFrom: string): string | null {
  const address = /<([^<>\s]+@[^<>\s]+)>\s*$/.exec(mailFrom)?.[1] ?? mailFrom.trim();
  const at = address.lastIndexOf('@');
  if (at < 1 || at === address.length - 1 || /\s/.test(address)) return null;
  return address
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
}

// A TEST-NET-2 address (RFC 5737): in no one's SPF record, so evaluating for it walks every mechanism and
// counts every lookup the record makes, as a receiver's evaluation of a relay's address can.
const PROBE_IP = '198.51.100.1';

const SPF_FIX_NONE =
  "add one TXT record `v=spf1 include:<your SMTP provider's SPF domain> ~all` on the domain (docs/deploy.md, The sending domain)";

export async function checkSendingDomain(
  mailFrom: string | undefined,
  options: { resolver: DnsResolver | null; dkimSelector?: string; unavailable?: string },
): Promise<CheckResult[]> {
  if (!mailFrom) {
    return [
      fail(
        'sending domain',
        'MAIL_FROM is not set',
        'set MAIL_FROM, e.g. `GOODY <hello@your-domain>`, in functions/.env.<project id>',
      ),
    ];
  }
  const domain = senderDomain(mailFrom);
  if (!domain) {
    return [
      fail(
        'sending domain',
        `MAIL_FROM "${mailFrom}" holds no address`,
        'set MAIL_FROM to `GOODY <hello@your-domain>`',
      ),
    ];
  }
  const results: CheckResult[] = [];
  if (FREE_MAIL_DOMAINS.has(domain)) {
    results.push(
      fail(
        'sending domain',
        `${domain} is a free-mail domain: its DMARC policy refuses mail sent from it through another relay`,
        'send from a domain you own, set up with your SMTP provider (README step 3)',
      ),
    );
  } else {
    results.push(pass('sending domain', `${domain} (not a free-mail domain)`));
  }
  const { resolver } = options;
  if (!resolver) {
    const why = options.unavailable ?? 'the local stack has no DNS for its sending domain';
    for (const name of ['SPF', 'DMARC', 'DKIM']) {
      results.push(
        cannotTell(
          `sending domain: ${name}`,
          why,
          'run with --project <id> (or --dns <server> to ask a given DNS server)',
        ),
      );
    }
    return results;
  }
  results.push(await checkSpf(domain, resolver));
  results.push(await checkDmarc(domain, resolver));
  results.push(await checkDkim(domain, resolver, options.dkimSelector));
  return results;
}

export async function checkSpf(domain: string, resolver: DnsResolver): Promise<CheckResult> {
  const name = 'sending domain: SPF';
  let result: Awaited<ReturnType<typeof spf>>;
  try {
    result = await spf({
      sender: `postmaster@${domain}`,
      ip: PROBE_IP,
      helo: domain,
      mta: 'goody-doctor.invalid',
      resolver,
    });
  } catch (error) {
    return cannotTell(name, `the lookup failed: ${messageOf(error)}`);
  }
  const comment = String(result.status.comment ?? '');
  switch (result.status.result) {
    case 'none':
      return fail(name, `no SPF record on ${domain}`, SPF_FIX_NONE);
    case 'permerror':
      if (/multiple SPF records/i.test(comment)) {
        return fail(
          name,
          `${domain} has more than one SPF record, so receivers treat it as having none (permerror)`,
          'merge them into one TXT record starting `v=spf1` (one `include:` per provider)',
        );
      }
      if (/lookup|too many|limit/i.test(comment)) {
        return fail(
          name,
          `${domain}'s SPF record needs more than 10 DNS lookups (permerror: ${comment})`,
          'drop includes of services that no longer send for you, or replace nested includes by their ip4:/ip6: ranges',
        );
      }
      return fail(name, `${domain}'s SPF record is broken (permerror: ${comment})`, SPF_FIX_NONE);
    case 'temperror':
      return cannotTell(name, `DNS did not answer for ${domain} (temperror: ${comment})`, 'run it again');
    default:
      return pass(name, `one record, ${lookupsOf(result)}: ${result.rr ?? '(record)'}`);
  }
}

/** mailauth counts the lookups an evaluation made (not in its declared types). */
function lookupsOf(result: object): string {
  const lookups = (result as { lookups?: { count?: unknown; limit?: unknown } }).lookups;
  return typeof lookups?.count === 'number'
    ? `${lookups.count} of ${String(lookups.limit ?? 10)} DNS lookups`
    : 'within the 10-lookup limit';
}

export async function checkDmarc(domain: string, resolver: DnsResolver): Promise<CheckResult> {
  const name = 'sending domain: DMARC';
  let result: Awaited<ReturnType<typeof dmarc>>;
  try {
    result = await dmarc({ headerFrom: domain, spfDomains: [], dkimDomains: [], resolver });
  } catch (error) {
    return cannotTell(name, `the lookup failed: ${messageOf(error)}`);
  }
  if (!result || result.status.result === 'temperror') {
    return cannotTell(name, `DNS did not answer for _dmarc.${domain}`, 'run it again');
  }
  if (result.status.result === 'none' || !result.rr) {
    return fail(
      name,
      `no DMARC record at _dmarc.${domain} (nor at its organisational domain)`,
      `add a TXT record at _dmarc.${domain}: \`v=DMARC1; p=none; rua=mailto:dmarc@${domain}\` (docs/deploy.md)`,
    );
  }
  const policy = String(result.p ?? '').toLowerCase();
  if (!['none', 'quarantine', 'reject'].includes(policy)) {
    return fail(
      name,
      `the DMARC record of ${result.domain} has no valid policy: ${result.rr}`,
      'give the record `p=none` (reports only), then `p=quarantine` or `p=reject` once reports show your mail passing',
    );
  }
  const note =
    policy === 'none'
      ? 'reports only; move to p=quarantine, then p=reject, once the reports show your mail passing'
      : 'enforced';
  return pass(name, `p=${policy} (${note}): ${result.rr}`);
}

export async function checkDkim(
  domain: string,
  resolver: DnsResolver,
  selector: string | undefined,
): Promise<CheckResult> {
  const name = 'sending domain: DKIM';
  if (!selector) {
    return cannotTell(
      name,
      'no selector given (a DKIM record is found only by its selector)',
      'add --dkim-selector <selector>, the one your SMTP provider names',
    );
  }
  const record = `${selector}._domainkey.${domain}`;
  try {
    const key = await getPublicKey('DKIM', record, 1024, resolver);
    const bits = key.modulusLength ? `, ${key.modulusLength}-bit key` : '';
    return pass(name, `${record} holds a valid key${bits}`);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') {
      return fail(
        name,
        `no DKIM record at ${record}`,
        "add the provider's DKIM record (CNAME or TXT) at that name, or give the selector it names",
      );
    }
    if (code === 'ESHORTKEY') {
      return fail(
        name,
        `the key at ${record} is shorter than 1024 bits`,
        'have the provider issue a 2048-bit key',
      );
    }
    if (typeof code === 'string' && code.startsWith('EINVALID')) {
      return fail(
        name,
        `the record at ${record} is not a usable DKIM key: ${messageOf(error)}`,
        "copy the provider's record again, whole",
      );
    }
    return cannotTell(name, `the lookup of ${record} failed: ${messageOf(error)}`, 'run it again');
  }
}

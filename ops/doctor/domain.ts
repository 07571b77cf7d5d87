// The sending domain of MAIL_FROM, read from DNS as a receiving mail server reads it, through mailauth's public
// API (by nodemailer's author): SPF evaluated with the RFC 7208 limits, the DMARC record found (falling back to
// the organisational domain), and the DKIM key found and tried by verifying a probe message signed with a
// throwaway key (a valid key answers "bad signature"). First a control lookup: a resolver that cannot resolve a
// name that must exist makes every DNS check "cannot tell", never a missing record.

import { generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { type DNSResolver, dkimSign, dkimVerify, dmarc, spf } from 'mailauth';
import { MAILBOX_PROVIDERS } from '../../functions/src/mail/providers.ts';
import type { SmtpProvider } from './providers.ts';
import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

/** A DNS lookup as mailauth takes it (TXT answers as arrays of strings; MX answers are objects). */
export type DnsResolver = DNSResolver;

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

const NAMES = ['SPF', 'DMARC', 'DKIM', 'MX'] as const;

/** The domain's top-level domain (its NS records are in the root zone): a name that must exist. */
export const controlName = (domain: string) => domain.slice(domain.lastIndexOf('.') + 1);

/** Whether the resolver answers at all: null when it does, else why not. */
export async function controlLookup(resolver: DnsResolver, name: string): Promise<string | null> {
  try {
    const answer = await resolver(name, 'NS');
    return answer.length > 0 ? null : `the resolver gives ${name} no NS records`;
  } catch (error) {
    const code = String((error as { code?: unknown }).code ?? '');
    return `the resolver cannot resolve ${name}, a name that must exist (${code || messageOf(error)})`;
  }
}

export interface SendingDomainOptions {
  resolver: DnsResolver | null;
  dkimSelector?: string;
  unavailable?: string;
  /** The relay's provider, when SMTP_URL's host names one: its SPF include is looked for. */
  provider?: SmtpProvider;
  /** The bounce (Return-Path) domain, when the relay uses its own: its SPF is checked too. */
  bounceDomain?: string;
}

export async function checkSendingDomain(
  mailFrom: string | undefined,
  options: SendingDomainOptions,
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
  const bounce = options.bounceDomain ?? options.provider?.bounceDomain?.(domain);
  const names = bounce && bounce !== domain ? [...NAMES, 'SPF of the bounce domain'] : [...NAMES];
  const unknowable = (why: string, fix: string) =>
    names.map((name) => cannotTell(`sending domain: ${name}`, why, fix));
  if (!resolver) {
    return [
      ...results,
      ...unknowable(
        options.unavailable ?? 'the local stack has no DNS for its sending domain',
        'run with --project <id> (or --dns <server> to ask a given DNS server)',
      ),
    ];
  }
  const network = await controlLookup(resolver, controlName(domain));
  if (network) {
    return [
      ...results,
      ...unknowable(
        `${network}: the network or the DNS server, not the records`,
        'run it where DNS works, or give a DNS server that answers: --dns <server>',
      ),
    ];
  }
  results.push(await checkSpf(domain, resolver, options.provider));
  results.push(await checkDmarc(domain, resolver));
  results.push(await checkDkim(domain, resolver, options.dkimSelector));
  results.push(await checkMx(domain, resolver));
  if (bounce && bounce !== domain) {
    results.push({
      ...(await checkSpf(bounce, resolver, options.provider)),
      name: 'sending domain: SPF of the bounce domain',
    });
  }
  return results;
}

/** The terms of an SPF record, lower case, without its `v=spf1`. */
function spfTerms(record: string): string[] {
  return record
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .filter((term) => term && term !== 'v=spf1');
}

/** Whether the record, or one it includes directly, includes `include`. */
async function includes(record: string, include: string, resolver: DnsResolver): Promise<boolean> {
  const direct = spfTerms(record)
    .filter((term) => /^[+~?-]?include:/.test(term))
    .map((term) => term.replace(/^[+~?-]?include:/, '').replace(/\.$/, ''));
  if (direct.includes(include)) return true;
  for (const name of direct) {
    try {
      const records = await resolver(name, 'TXT');
      const spfRecord = records
        .map((parts) => [parts].flat().join(''))
        .find((text) => /^v=spf1\b/i.test(text));
      if (spfRecord && spfTerms(spfRecord).some((term) => term.replace(/^[+~?-]?include:/, '') === include)) {
        return true;
      }
    } catch {
      // An include that does not resolve: mailauth's evaluation says so.
    }
  }
  return false;
}

export async function checkSpf(
  domain: string,
  resolver: DnsResolver,
  provider?: SmtpProvider,
): Promise<CheckResult> {
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
  const record = String(result.rr ?? '');
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
    case 'pass':
      // An address in no one's network passes: the record lets anyone send as the domain (+all, or an include
      // that ends in one).
      return fail(
        name,
        `${domain}'s SPF record lets any server send as ${domain} (an address in no one's network passes): ${record}`,
        "end the record with `~all` or `-all`, never `+all` or `all`: `v=spf1 include:<your SMTP provider's SPF domain> ~all`",
      );
    case 'neutral':
      return fail(
        name,
        `${domain}'s SPF record says nothing of servers it does not list (\`?all\`), which receivers read as no SPF: ${record}`,
        "end the record with `~all` or `-all`: `v=spf1 include:<your SMTP provider's SPF domain> ~all`",
      );
    default:
      break;
  }
  const terms = spfTerms(record);
  const mechanisms = terms.filter((term) => !/^[+~?-]?all$/.test(term) && !/^[a-z][a-z0-9_.-]*=/.test(term));
  if (mechanisms.length === 0 && !terms.some((term) => term.startsWith('redirect='))) {
    return fail(
      name,
      `${domain}'s SPF record lets no server send as ${domain} (nothing before its \`all\`): ${record}`,
      SPF_FIX_NONE,
    );
  }
  if (provider && !(await includes(record, provider.spfInclude, resolver))) {
    return fail(
      name,
      `${domain}'s SPF record does not include ${provider.spfInclude}, the servers ${provider.name} sends from: ${record}`,
      `add \`include:${provider.spfInclude}\` before the record's \`all\` (one record, one include per provider)`,
    );
  }
  return pass(
    name,
    `one record, ${lookupsOf(result)}${provider ? `, including ${provider.name}'s ${provider.spfInclude}` : ''}: ${record}`,
  );
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
    result = await dmarc({
      headerFrom: domain,
      spfDomains: [],
      dkimDomains: [],
      resolver,
    });
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
  const pct = Number(/(?:^|;)\s*pct\s*=\s*(\d{1,3})/i.exec(String(result.rr))?.[1] ?? 100);
  const notes = [
    policy === 'none'
      ? 'receivers only send reports: mail failing SPF and DKIM alignment is delivered as if there were no record; move to p=quarantine, then p=reject, once the reports show your mail passing'
      : `receivers are asked to ${policy === 'reject' ? 'refuse' : 'put in spam'} mail from ${domain} that fails SPF and DKIM alignment`,
  ];
  if (pct < 100 && policy !== 'none') {
    notes.push(`pct=${pct}: that policy applies to ${pct}% of the failing mail, the rest is delivered`);
  }
  return pass(name, `p=${policy} (${notes.join('; ')}): ${result.rr}`);
}

// A throwaway key, made once: a probe message signed with it finds the domain's published key through
// mailauth's verifier, which answers "bad signature" for a valid key that is not ours.
let probeKey: string | undefined;
const PROBE_MESSAGE = 'From: <probe@goody-doctor.invalid>\r\nSubject: DKIM key probe\r\n\r\nprobe\r\n';

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
  let status: { result?: string; comment?: string; policy?: Record<string, unknown> };
  let modulusLength: number | undefined;
  try {
    probeKey ??= generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      type: 'pkcs1',
      format: 'pem',
    }) as string;
    // mailauth signs with each entry of signatureData (its declared type names only the single-signature fields).
    const signed = await dkimSign(PROBE_MESSAGE, {
      signatureData: [{ signingDomain: domain, selector, privateKey: probeKey }],
    } as unknown as Parameters<typeof dkimSign>[1]);
    const verified = await dkimVerify(Buffer.from(signed.signatures + PROBE_MESSAGE), {
      resolver,
      minBitLength: 1024,
    });
    const found = verified.results[0] as { status?: typeof status; modulusLength?: number } | undefined;
    status = found?.status ?? {};
    modulusLength = found?.modulusLength;
  } catch (error) {
    return cannotTell(name, `the lookup of ${record} failed: ${messageOf(error)}`, 'run it again');
  }
  const comment = String(status.comment ?? '');
  if (status.result === 'fail' && /bad signature/i.test(comment)) {
    return pass(name, `${record} holds a valid key${modulusLength ? `, ${modulusLength}-bit key` : ''}`);
  }
  if (status.result === 'policy' && status.policy?.['dkim-rules'] === 'weak-key') {
    return fail(
      name,
      `the key at ${record} is shorter than 1024 bits`,
      'have the provider issue a 2048-bit key',
    );
  }
  if (status.result === 'neutral' && /no key/i.test(comment)) {
    return fail(
      name,
      `no DKIM record at ${record}`,
      "add the provider's DKIM record (CNAME or TXT) at that name, or give the selector it names",
    );
  }
  if (status.result === 'temperror') {
    return cannotTell(name, `DNS did not answer for ${record} (${comment})`, 'run it again');
  }
  return fail(
    name,
    `the record at ${record} is not a usable DKIM key${comment ? ` (${comment})` : ''}`,
    "copy the provider's record again, whole",
  );
}

/** The From domain's MX: the thank-you promises removal by reply, so replies must reach a mailbox. */
export async function checkMx(domain: string, resolver: DnsResolver): Promise<CheckResult> {
  const name = 'sending domain: MX';
  const fix = `add the MX records of your mail host for ${domain}, so replies to MAIL_FROM (asking for removal, as the thank-you offers) reach the team`;
  try {
    const records = (await resolver(domain, 'MX')) as unknown as Array<{ exchange?: string }>;
    const hosts = records
      .map((record) => String(record.exchange ?? ''))
      .filter((host) => host && host !== '.');
    if (hosts.length === 0) return fail(name, `${domain} accepts no mail (no MX, or a null MX)`, fix);
    return pass(name, `replies reach ${hosts.slice(0, 3).join(', ')}`);
  } catch (error) {
    const code = String((error as { code?: unknown }).code ?? '');
    if (code === 'ENOTFOUND' || code === 'ENODATA') return fail(name, `no MX record on ${domain}`, fix);
    return cannotTell(
      name,
      `the lookup of ${domain}'s MX failed: ${code || messageOf(error)}`,
      'run it again',
    );
  }
}

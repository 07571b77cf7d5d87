// --read-message <file.eml>: the thank-you as a mailbox received it ("Show original" > Download), read for what
// only a received message shows: a passing DKIM signature of MAIL_FROM's domain that covers both unsubscribe
// headers (RFC 8058 section 3.1), the receiver's own SPF/DKIM/DMARC verdict, the one-click headers as sent, and
// no link rewritten or image added by the relay's tracking. DKIM is verified by mailauth against DNS.

import { dkimVerify } from 'mailauth';
import { simpleParser } from 'mailparser';
import { type DnsResolver, senderDomain } from './domain.ts';
import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

const NAME = 'received message';

export async function checkReceivedMessage(
  raw: Buffer,
  options: { resolver: DnsResolver | null; unsubscribeUrl?: string; resolverMissing?: string },
): Promise<CheckResult[]> {
  let parsed: Awaited<ReturnType<typeof simpleParser>>;
  try {
    parsed = await simpleParser(raw);
  } catch (error) {
    return [
      fail(
        NAME,
        `not a message: ${messageOf(error)}`,
        'save the message with "Show original" > "Download original"',
      ),
    ];
  }
  const from = parsed.from?.value[0]?.address ?? '';
  const domain = senderDomain(from);
  if (!domain)
    return [fail(NAME, 'the message has no From address', 'save the thank-you itself, as received')];
  const results: CheckResult[] = [];
  results.push(...(await dkimChecks(raw, domain, options)));
  results.push(receiverVerdict(parsed.headerLines));
  results.push(oneClick(parsed.headerLines, options.unsubscribeUrl));
  results.push(noTracking(typeof parsed.html === 'string' ? parsed.html : '', options.unsubscribeUrl));
  return results;
}

async function dkimChecks(
  raw: Buffer,
  domain: string,
  options: { resolver: DnsResolver | null; resolverMissing?: string },
): Promise<CheckResult[]> {
  const name = `${NAME}: DKIM`;
  const covers = `${NAME}: DKIM covers List-Unsubscribe`;
  if (!options.resolver) {
    const why = options.resolverMissing ?? 'no DNS to fetch the signing key from';
    return [cannotTell(name, why, 'run with --project <id> or --dns <server>'), cannotTell(covers, why)];
  }
  let verified: Awaited<ReturnType<typeof dkimVerify>>;
  try {
    verified = await dkimVerify(raw, { resolver: options.resolver });
  } catch (error) {
    return [
      cannotTell(name, `mailauth could not verify it: ${messageOf(error)}`),
      cannotTell(covers, 'see above'),
    ];
  }
  const aligned = verified.results.filter((result) => {
    const d = String(result.signingDomain ?? '').toLowerCase();
    return result.status.result === 'pass' && (domain === d || domain.endsWith(`.${d}`));
  });
  const signature = aligned[0];
  if (!signature) {
    const seen = verified.results
      .map((result) => `d=${result.signingDomain}: ${result.status.result}`)
      .join(', ');
    return [
      fail(
        name,
        `no passing DKIM signature of ${domain}${seen ? ` (${seen})` : ' (the message is not signed)'}`,
        `publish the provider's DKIM record for ${domain} and turn on signing with your domain in its settings`,
      ),
      cannotTell(covers, 'no passing signature of the domain to read'),
    ];
  }
  const signed = String((signature as { signingHeaders?: { keys?: unknown } }).signingHeaders?.keys ?? '')
    .split(/:\s*/)
    .map((key) => key.trim().toLowerCase());
  const missing = ['list-unsubscribe', 'list-unsubscribe-post'].filter((key) => !signed.includes(key));
  return [
    pass(name, `a passing signature of d=${signature.signingDomain} (selector ${signature.selector ?? '?'})`),
    missing.length === 0
      ? pass(covers, 'the signature covers List-Unsubscribe and List-Unsubscribe-Post (RFC 8058)')
      : fail(
          covers,
          `the signature does not cover ${missing.join(' and ')}, so providers may ignore the one-click unsubscribe`,
          'ask the SMTP provider to sign both List-Unsubscribe headers (RFC 8058 section 3.1), or move to one that does',
        ),
  ];
}

/** The receiver's Authentication-Results: the first in the message, the receiving server's own, above any it brought. */
function receiverVerdict(lines: ReadonlyArray<{ key: string; line: string }>): CheckResult {
  const name = `${NAME}: receiver's verdict`;
  const text = lines.find((entry) => entry.key === 'authentication-results')?.line ?? '';
  if (!text) {
    return cannotTell(
      name,
      'the message has no Authentication-Results header',
      'save the thank-you as your mailbox received it ("Show original" > "Download original")',
    );
  }
  const verdict = Object.fromEntries(
    [...text.matchAll(/\b(spf|dkim|dmarc)=([a-z]+)/gi)].map((m) => [
      String(m[1]).toLowerCase(),
      String(m[2]).toLowerCase(),
    ]),
  );
  const said = ['spf', 'dkim', 'dmarc'].map((key) => `${key}=${verdict[key] ?? '?'}`).join(', ');
  return verdict.dmarc === 'pass'
    ? pass(name, said)
    : fail(
        name,
        said,
        'fix what the sending domain checks above fail; DMARC passes once SPF or DKIM passes aligned with the From domain',
      );
}

function oneClick(
  lines: ReadonlyArray<{ key: string; line: string }>,
  unsubscribeUrl: string | undefined,
): CheckResult {
  const name = `${NAME}: one-click unsubscribe`;
  // The header lines as the mail carries them (mailparser folds the List-* headers into an object of its own).
  const value = (key: string) => {
    const line = lines.find((entry) => entry.key === key)?.line ?? '';
    return line
      .slice(line.indexOf(':') + 1)
      .replace(/\s+/g, ' ')
      .trim();
  };
  const unsubscribe = value('list-unsubscribe');
  const links = [...unsubscribe.matchAll(/<([^>]+)>/g)].map((match) => match[1] ?? '');
  const post = value('list-unsubscribe-post');
  const problems: string[] = [];
  const link = links[0] ?? '';
  if (links.length !== 1 || !link.startsWith('https://')) {
    problems.push(`List-Unsubscribe is not the one https link (${links.length} link(s))`);
  } else if (unsubscribeUrl && !link.startsWith(`${unsubscribeUrl}?`)) {
    problems.push(`List-Unsubscribe points elsewhere than UNSUBSCRIBE_URL (${new URL(link).host})`);
  }
  if (post !== 'List-Unsubscribe=One-Click')
    problems.push('no List-Unsubscribe-Post: List-Unsubscribe=One-Click');
  if (!value('list-id')) problems.push('no List-Id');
  return problems.length === 0
    ? pass(
        name,
        'List-Unsubscribe is the https link to UNSUBSCRIBE_URL, with List-Unsubscribe-Post and a List-Id',
      )
    : fail(
        name,
        problems.join('; '),
        'deploy the current functions; a relay that rewrites headers must be told to leave them',
      );
}

function noTracking(html: string, unsubscribeUrl: string | undefined): CheckResult {
  const name = `${NAME}: no tracking`;
  const links = [...html.matchAll(/href="([^"]*)"/gi)].map((match) =>
    (match[1] ?? '').replaceAll('&amp;', '&'),
  );
  const rewritten = links.filter(
    (link) => !link.startsWith('mailto:') && !(unsubscribeUrl && link.startsWith(`${unsubscribeUrl}?`)),
  );
  const images = (html.match(/<img\b/gi) ?? []).length;
  if (!html) return cannotTell(name, 'the message has no HTML part to read');
  if (rewritten.length === 0 && images === 0) return pass(name, 'its links are as sent and it has no image');
  const hosts = [
    ...new Set(
      rewritten.map((link) => {
        try {
          return new URL(link).host;
        } catch {
          return link.slice(0, 40);
        }
      }),
    ),
  ];
  return fail(
    name,
    [
      rewritten.length ? `${rewritten.length} link(s) rewritten (to ${hosts.join(', ')})` : '',
      images ? `${images} image(s) added` : '',
    ]
      .filter(Boolean)
      .join('; '),
    "turn off the relay's click tracking and open tracking (and link branding) for the sending domain",
  );
}

// The sending domain's checks against a DNS server on loopback with good and broken records.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkSendingDomain, type DnsResolver, dnsResolver, senderDomain } from './domain.ts';
import { type LocalDns, startLocalDns, type Zone } from './local-dns.ts';
import { providerOf } from './providers.ts';

const DKIM_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .publicKey.export({ type: 'spki', format: 'der' })
  .toString('base64');

/** A domain set up as docs/deploy.md says: one SPF record, DMARC, a DKIM selector, MX for replies. */
function goodZone(): Zone {
  return {
    example: [{ ns: 'ns.root.example' }],
    'goody.example': [
      'v=spf1 include:spf.relay.example ~all',
      'google-site-verification=abc',
      { mx: 'mx.mailhost.example' },
    ],
    'spf.relay.example': ['v=spf1 ip4:203.0.113.0/24 -all'],
    '_dmarc.goody.example': ['v=DMARC1; p=none; rua=mailto:dmarc@goody.example'],
    'relay1._domainkey.goody.example': [['v=DKIM1; k=rsa; p=', DKIM_KEY]],
  };
}

let dns: LocalDns;
let resolver: DnsResolver;

beforeAll(async () => {
  dns = await startLocalDns();
  resolver = dnsResolver([dns.server]);
});
afterAll(() => dns.stop());
beforeEach(() => {
  for (const name of Object.keys(dns.zone)) delete dns.zone[name];
  Object.assign(dns.zone, goodZone());
});

const check = (mailFrom = 'GOODY <hello@goody.example>', dkimSelector: string | undefined = 'relay1') =>
  checkSendingDomain(mailFrom, { resolver, dkimSelector });
const byName = async (name: string, results?: ReturnType<typeof check>) =>
  (await (results ?? check())).find((result) => result.name === name);

describe('the sending domain', () => {
  it('reads the domain of MAIL_FROM', () => {
    expect(senderDomain('GOODY <hello@Goody.Example>')).toBe('goody.example');
    expect(senderDomain('hello@goody.example')).toBe('goody.example');
    expect(senderDomain('GOODY')).toBeNull();
  });

  it('passes every check on a domain set up as docs/deploy.md says', async () => {
    const results = await check();
    expect(results.map((result) => [result.name, result.outcome])).toEqual([
      ['sending domain', 'pass'],
      ['sending domain: SPF', 'pass'],
      ['sending domain: DMARC', 'pass'],
      ['sending domain: DKIM', 'pass'],
      ['sending domain: MX', 'pass'],
    ]);
    // p=none passes, saying plainly that it asks only for reports, and never that it is enforced.
    expect(results[2]?.detail).toContain('p=none (receivers only send reports');
    expect(JSON.stringify(results)).not.toContain('enforced');
    expect(results[3]?.detail).toContain('2048-bit');
    expect(results[4]?.detail).toContain('mx.mailhost.example');
  });

  it('fails SPF that lets anyone send (+all, all, ?all) and SPF that lets nobody send (a bare -all)', async () => {
    for (const [record, said] of [
      ['v=spf1 +all', 'lets any server send'],
      ['v=spf1 include:spf.relay.example all', 'lets any server send'],
      ['v=spf1 include:spf.relay.example ?all', 'says nothing of servers it does not list'],
      ['v=spf1 -all', 'lets no server send'],
      ['v=spf1 ~all', 'lets no server send'],
    ] as const) {
      dns.zone['goody.example'] = [record, { mx: 'mx.mailhost.example' }];
      const result = await byName('sending domain: SPF');
      expect(result?.outcome, record).toBe('fail');
      expect(result?.detail, record).toContain(said);
      expect(result?.fix, record).toMatch(/~all/);
    }
  });

  it("checks the relay's provider against the record, and the bounce domain the provider uses", async () => {
    const resend = providerOf('smtp.resend.com');
    const ses = providerOf('email-smtp.eu-west-1.amazonaws.com');
    expect(resend?.name).toBe('Resend');
    // SES's servers are not in a record that includes only another relay.
    const withSes = await checkSendingDomain('GOODY <hello@goody.example>', {
      resolver,
      dkimSelector: 'relay1',
      provider: ses,
    });
    expect(withSes.find((result) => result.name === 'sending domain: SPF')).toMatchObject({
      outcome: 'fail',
      fix: expect.stringContaining('include:amazonses.com'),
    });
    // Resend bounces through send.<domain>: its SPF is read too.
    dns.zone['goody.example'] = ['v=spf1 include:amazonses.com ~all', { mx: 'mx.mailhost.example' }];
    dns.zone['amazonses.com'] = ['v=spf1 ip4:199.255.192.0/22 -all'];
    const withoutBounce = await checkSendingDomain('GOODY <hello@goody.example>', {
      resolver,
      dkimSelector: 'relay1',
      provider: resend,
    });
    expect(withoutBounce.find((result) => result.name === 'sending domain: SPF')?.outcome).toBe('pass');
    expect(withoutBounce.at(-1)).toMatchObject({
      name: 'sending domain: SPF of the bounce domain',
      outcome: 'fail',
      detail: 'no SPF record on send.goody.example',
    });
    dns.zone['send.goody.example'] = ['v=spf1 include:amazonses.com ~all'];
    const withBounce = await checkSendingDomain('GOODY <hello@goody.example>', {
      resolver,
      dkimSelector: 'relay1',
      provider: resend,
    });
    expect(withBounce.filter((result) => result.outcome !== 'pass')).toEqual([]);
  });

  it('says what a DMARC pct below 100 means', async () => {
    dns.zone['_dmarc.goody.example'] = ['v=DMARC1; p=reject; pct=25'];
    const result = await byName('sending domain: DMARC');
    expect(result?.outcome).toBe('pass');
    expect(result?.detail).toContain('pct=25: that policy applies to 25% of the failing mail');
  });

  it('fails a From domain with no MX: replies asking for removal would reach no one', async () => {
    dns.zone['goody.example'] = ['v=spf1 include:spf.relay.example ~all'];
    const result = await byName('sending domain: MX');
    expect(result?.outcome).toBe('fail');
    expect(result?.fix).toContain('replies to MAIL_FROM');
  });

  it('cannot tell any DNS check when the resolver resolves no name, never a missing record', async () => {
    for (const name of Object.keys(dns.zone)) delete dns.zone[name];
    const results = await check();
    expect(results[0]).toMatchObject({ name: 'sending domain', outcome: 'pass' });
    expect(results.slice(1).map((result) => [result.name, result.outcome])).toEqual([
      ['sending domain: SPF', 'cannot tell'],
      ['sending domain: DMARC', 'cannot tell'],
      ['sending domain: DKIM', 'cannot tell'],
      ['sending domain: MX', 'cannot tell'],
    ]);
    expect(results[1]?.detail).toContain('the network or the DNS server, not the records');
  });

  it('fails a free-mail sender', async () => {
    const result = await byName('sending domain', check('GOODY <goody.launch@gmail.com>'));
    expect(result).toMatchObject({ outcome: 'fail' });
    expect(result?.fix).toContain('domain you own');
  });

  it('fails a domain with two SPF records, saying to merge them', async () => {
    dns.zone['goody.example']?.push('v=spf1 include:other.example -all');
    const result = await byName('sending domain: SPF');
    expect(result?.outcome).toBe('fail');
    expect(result?.detail).toContain('more than one SPF record');
    expect(result?.fix).toContain('merge them into one TXT record');
  });

  it('fails a domain with no SPF record', async () => {
    dns.zone['goody.example'] = ['google-site-verification=abc', { mx: 'mx.mailhost.example' }];
    const result = await byName('sending domain: SPF');
    expect(result).toMatchObject({ outcome: 'fail', detail: 'no SPF record on goody.example' });
  });

  it('fails an SPF record past the 10-lookup limit', async () => {
    const includes = Array.from({ length: 11 }, (_, i) => `include:s${i}.relay.example`).join(' ');
    dns.zone['goody.example'] = [`v=spf1 ${includes} ~all`];
    for (let i = 0; i < 11; i += 1) dns.zone[`s${i}.relay.example`] = ['v=spf1 ip4:203.0.113.1 -all'];
    const result = await byName('sending domain: SPF');
    expect(result?.outcome).toBe('fail');
    expect(result?.detail).toContain('more than 10 DNS lookups');
  });

  it('fails a domain with no DMARC record, giving the record to add', async () => {
    delete dns.zone['_dmarc.goody.example'];
    const result = await byName('sending domain: DMARC');
    expect(result?.outcome).toBe('fail');
    expect(result?.detail).toContain('no DMARC record at _dmarc.goody.example');
    expect(result?.fix).toContain('v=DMARC1; p=none');
  });

  it('fails a missing DKIM selector record, and cannot tell without a selector', async () => {
    expect(await byName('sending domain: DKIM', check(undefined, 'other'))).toMatchObject({
      outcome: 'fail',
      detail: 'no DKIM record at other._domainkey.goody.example',
    });
    const unselected = checkSendingDomain('GOODY <hello@goody.example>', { resolver });
    expect((await byName('sending domain: DKIM', unselected))?.outcome).toBe('cannot tell');
  });

  it('cannot tell without DNS (the local stack), and fails no check for it', async () => {
    const results = await checkSendingDomain('GOODY <hello@goody.example>', { resolver: null });
    expect(results.slice(1).map((result) => result.outcome)).toEqual([
      'cannot tell',
      'cannot tell',
      'cannot tell',
      'cannot tell',
    ]);
  });
});

// The sending domain's checks against a DNS server on loopback with good and broken records.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkSendingDomain, type DnsResolver, dnsResolver, senderDomain } from './domain.ts';
import { type LocalDns, startLocalDns } from './local-dns.ts';

const DKIM_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .publicKey.export({ type: 'spki', format: 'der' })
  .toString('base64');

/** A domain set up as docs/deploy.md says: one SPF record, DMARC, a DKIM selector. */
function goodZone() {
  return {
    'goody.example': ['v=spf1 include:spf.relay.example ~all', 'google-site-verification=abc'],
    'spf.relay.example': ['v=spf1 ip4:203.0.113.0/24 -all'],
    '_dmarc.goody.example': ['v=DMARC1; p=none; rua=mailto:dmarc@goody.example'],
    'relay1._domainkey.goody.example': [['v=DKIM1; k=rsa; p=', DKIM_KEY]],
  } as Record<string, Array<string | string[]>>;
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
    ]);
    expect(results[2]?.detail).toContain('p=none');
    expect(results[3]?.detail).toContain('2048-bit');
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
    dns.zone['goody.example'] = ['google-site-verification=abc'];
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
    ]);
  });
});

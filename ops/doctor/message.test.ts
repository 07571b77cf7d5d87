// --read-message: the thank-you as a mailbox would receive it, DKIM-signed with a key published on a DNS server on
// loopback; one relay signing as RFC 8058 asks and leaving the mail as sent, and relays that do not.
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import MailComposer from 'nodemailer/lib/mail-composer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildThankYouMessage } from '../../functions/src/mail/thank-you-message.ts';
import { dnsResolver } from './domain.ts';
import { type LocalDns, startLocalDns } from './local-dns.ts';
import { checkReceivedMessage } from './message.ts';

const UNSUBSCRIBE_URL = 'https://us-central1-goody.cloudfunctions.net/unsubscribe';
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PUBLIC_KEY = keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const PRIVATE_KEY = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const SIGNED = 'From:To:Subject:Date:Message-ID:List-Id:List-Unsubscribe:List-Unsubscribe-Post';
const VERDICT =
  'Authentication-Results: mx.google.com; dkim=pass header.i=@goody.example; spf=pass smtp.mailfrom=goody.example; dmarc=pass (p=QUARANTINE) header.from=goody.example\r\n';

let dns: LocalDns;
beforeAll(async () => {
  dns = await startLocalDns({ 'relay1._domainkey.goody.example': [['v=DKIM1; k=rsa; p=', PUBLIC_KEY]] });
});
afterAll(() => dns.stop());

/** The thank-you as it leaves the relay: composed, optionally changed, signed with `headerList`, then received. */
async function received(
  options: { headerList?: string; html?: (html: string) => string; verdict?: string } = {},
) {
  const message = buildThankYouMessage({
    to: 'operator@goody.example',
    from: 'GOODY <hello@goody.example>',
    subscriptionType: 'updates',
    recipientHash: 'a'.repeat(32),
    unsubscribeUrl: `${UNSUBSCRIBE_URL}?a=launch-check&t=launch-check`,
  });
  const composed = new MailComposer({
    ...message,
    html: options.html ? options.html(message.html) : message.html,
  });
  const raw = await new Promise<Buffer>((resolve, reject) =>
    composed.compile().build((error, built) => (error ? reject(error) : resolve(built))),
  );
  // mailauth's signer takes its keys in signatureData (its declared types say otherwise).
  const signer = { signingDomain: 'goody.example', selector: 'relay1', privateKey: PRIVATE_KEY };
  const { signatures, errors } = await dkimSign(raw, {
    ...signer,
    signatureData: [signer],
    headerList: (options.headerList ?? SIGNED) as unknown as string[],
  } as Parameters<typeof dkimSign>[1]);
  expect(errors).toEqual([]);
  return Buffer.concat([Buffer.from(options.verdict ?? VERDICT), Buffer.from(signatures), raw]);
}

const read = async (raw: Buffer) =>
  checkReceivedMessage(raw, { resolver: dnsResolver([dns.server]), unsubscribeUrl: UNSUBSCRIBE_URL });
const outcomes = (results: Awaited<ReturnType<typeof read>>) =>
  results.map((result) => [result.name, result.outcome]);

describe('a received thank-you', () => {
  it('passes when the relay signs both unsubscribe headers with our domain and changes nothing', async () => {
    const results = await read(await received());
    expect(outcomes(results)).toEqual([
      ['received message: DKIM', 'pass'],
      ['received message: DKIM covers List-Unsubscribe', 'pass'],
      ["received message: receiver's verdict", 'pass'],
      ['received message: one-click unsubscribe', 'pass'],
      ['received message: no tracking', 'pass'],
    ]);
  });

  it('fails a signature that leaves out List-Unsubscribe-Post, as RFC 8058 forbids', async () => {
    const results = await read(await received({ headerList: SIGNED.replace(':List-Unsubscribe-Post', '') }));
    expect(results[0]?.outcome).toBe('pass');
    expect(results[1]).toMatchObject({ outcome: 'fail' });
    expect(results[1]?.detail).toContain('does not cover list-unsubscribe-post');
    expect(results[1]?.fix).toContain('ask the SMTP provider to sign both');
  });

  it("fails a relay's click and open tracking", async () => {
    const tracked = await received({
      html: (html) =>
        html
          .replace(/href="https:[^"]*"/, 'href="https://click.relay.example/ls/abc"')
          .replace('</body>', '<img src="https://open.relay.example/o.gif" width="1" height="1"></body>'),
    });
    const result = (await read(tracked)).find((each) => each.name === 'received message: no tracking');
    expect(result?.outcome).toBe('fail');
    expect(result?.detail).toContain('1 link(s) rewritten (to click.relay.example); 1 image(s) added');
    expect(result?.fix).toContain('click tracking and open tracking');
  });

  it("fails a message without our domain's signature, and a receiver's DMARC fail", async () => {
    delete dns.zone['relay1._domainkey.goody.example'];
    try {
      const results = await read(
        await received({
          verdict: 'Authentication-Results: mx.example; spf=fail; dkim=fail; dmarc=fail\r\n',
        }),
      );
      expect(results[0]).toMatchObject({ name: 'received message: DKIM', outcome: 'fail' });
      expect(results[0]?.detail).toContain('no passing DKIM signature of goody.example');
      expect(results[2]).toMatchObject({ outcome: 'fail', detail: 'spf=fail, dkim=fail, dmarc=fail' });
    } finally {
      dns.zone['relay1._domainkey.goody.example'] = [['v=DKIM1; k=rsa; p=', PUBLIC_KEY]];
    }
  });
});

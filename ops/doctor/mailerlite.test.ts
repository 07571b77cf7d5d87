// The MailerLite checks against the stand-in: an account set up as the README says, and one broken thing at a time.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type MailerLiteStandIn, startMailerLiteStandIn } from '../../stand-ins/mailerlite/index.ts';
import { checkMailerLite } from './mailerlite.ts';

let ml: MailerLiteStandIn | undefined;
afterEach(async () => {
  await ml?.stop();
  ml = undefined;
});

async function account(customFields = ['source']) {
  ml = await startMailerLiteStandIn({ quiet: true, apiKey: 'ml-key', customFields });
  const updates = ml.addGroup('GOODY launch updates');
  const club = ml.addGroup('GOODY Club');
  return { ml, updates, club };
}

const setup = (baseUrl: string, groups: { updates: string; club: string }, apiKey = 'ml-key') => ({
  baseUrl,
  apiKey,
  groups: { MAILERLITE_GROUP_UPDATES: groups.updates, MAILERLITE_GROUP_CLUB: groups.club },
  missingNamedGroupFails: true,
});

describe('MailerLite', () => {
  it('passes an account with both groups by id and the source field, and prints its rate limit', async () => {
    const { ml, updates, club } = await account();
    const results = await checkMailerLite(setup(ml.baseUrl, { updates, club }));
    expect(results.map((result) => [result.name, result.outcome])).toEqual([
      ['MailerLite: key', 'pass'],
      ['MailerLite: MAILERLITE_GROUP_UPDATES', 'pass'],
      ['MailerLite: MAILERLITE_GROUP_CLUB', 'pass'],
      ['MailerLite: double opt-in', 'cannot tell'],
      ['MailerLite: field source', 'pass'],
    ]);
    expect(results[3]?.detail).toContain('Double opt-in for API and integrations');
    expect(results[3]?.detail).toContain(
      '"synced" (docs/spec) then means stored in MailerLite, not subscribed',
    );
    expect(results[0]?.detail).toMatch(/rate limit 120 requests a minute, \d+ left now/);
    // Reads only: nothing was created.
    expect(ml.state.groups).toHaveLength(2);
    expect(
      ml.state.requests.every((request) => request.path.startsWith('/api/') && request.status === 200),
    ).toBe(true);
  });

  it('fails a key MailerLite refuses, saying how to set a new one', async () => {
    const { ml, updates, club } = await account();
    const [result, ...rest] = await checkMailerLite(setup(ml.baseUrl, { updates, club }, 'stale-key'));
    expect(result).toMatchObject({ name: 'MailerLite: key', outcome: 'fail' });
    expect(result?.detail).toContain('401');
    expect(result?.detail).not.toContain('stale-key');
    expect(result?.fix).toContain('functions:secrets:set MAILERLITE_API_KEY');
    expect(rest).toEqual([]);
  });

  it('fails a group id the account does not have, naming the param', async () => {
    const { ml, updates } = await account();
    const results = await checkMailerLite(setup(ml.baseUrl, { updates, club: '139790465506477360' }));
    const club = results.find((result) => result.name === 'MailerLite: MAILERLITE_GROUP_CLUB');
    expect(club?.outcome).toBe('fail');
    expect(club?.detail).toContain('139790465506477360 is not a group of this account');
    expect(club?.fix).toContain('set MAILERLITE_GROUP_CLUB');
  });

  it('fails an account without the source field', async () => {
    const { ml, updates, club } = await account([]);
    const results = await checkMailerLite(setup(ml.baseUrl, { updates, club }));
    expect(results.at(-1)).toMatchObject({ name: 'MailerLite: field source', outcome: 'fail' });
    expect(results.at(-1)?.fix).toContain('custom field with the key `source`');
  });

  it('fails a group named but missing in production, and lets the local stack create it', async () => {
    const { ml } = await account();
    const names = { updates: 'GOODY launch updates', club: 'GOODY members' };
    const strict = await checkMailerLite(setup(ml.baseUrl, names));
    expect(strict[1]?.outcome).toBe('pass');
    expect(strict[2]).toMatchObject({ outcome: 'fail', detail: 'no group named "GOODY members"' });
    const local = await checkMailerLite({ ...setup(ml.baseUrl, names), missingNamedGroupFails: false });
    expect(local[2]?.outcome).toBe('pass');
  });
});

describe('MailerLite settings the stand-in cannot show', () => {
  it('fails a `source` field that is not text, and groups whose contacts are all unconfirmed (double opt-in)', async () => {
    // An account as MailerLite lists it: groups with their counts by status, a number field `source`.
    const server = createServer((req, res) => {
      const data = req.url?.startsWith('/api/groups')
        ? [
            { id: '11', name: 'GOODY launch updates', active_count: 0, unconfirmed_count: 40 },
            { id: '12', name: 'GOODY Club', active_count: 0, unconfirmed_count: 3 },
          ]
        : [{ id: '1', key: 'source', name: 'source', type: 'number' }];
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data, meta: { last_page: 1 } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
      const results = await checkMailerLite(setup(base, { updates: '11', club: '12' }));
      const byName = (name: string) => results.find((result) => result.name === name);
      expect(byName('MailerLite: double opt-in')).toMatchObject({ outcome: 'fail' });
      expect(byName('MailerLite: double opt-in')?.detail).toContain(
        '43 unconfirmed contact(s) and no active one',
      );
      expect(byName('MailerLite: field source')).toMatchObject({ outcome: 'fail' });
      expect(byName('MailerLite: field source')?.detail).toContain('of type number, not text');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

// The two sign-up callables on the site's own origin, as the Hosting emulator serves them: /api/<name> is a
// rewrite to the function (firebase.json), and App Check is still the function's to enforce behind it. In the
// App Check run (support/app-check.ts) the callables refuse a call that carries no token, through the rewrite as
// on their own host; in the plain run, like the local stack, they take it.

import { CALLABLES } from '@goody/contract';
import { describe, expect, it } from 'vitest';
import { uniqueEmail } from './support/app.ts';
import { APP_CHECK_TOKEN } from './support/app-check.ts';
import { useE2E } from './support/fixture.ts';
import { callCallable } from './support/services.ts';

const e2e = useE2E();

const CASES = [
  { name: CALLABLES.addContact, data: () => ({ email: uniqueEmail('rewrite'), source: 'hero_form' }) },
  { name: CALLABLES.sendThankYou, data: () => ({ email: uniqueEmail('rewrite') }) },
] as const;

describe.each(CASES)("the site's /api/$name", ({ name, data }) => {
  const url = () => `${e2e.stack.siteUrl}/api/${name}`;

  it('reaches the function through the Hosting emulator: a call with an App Check token is accepted', async () => {
    const answer = await callCallable(e2e.stack, name, data(), {
      url: url(),
      appCheckToken: APP_CHECK_TOKEN,
    });
    expect(answer).toEqual({ status: 200, body: { result: { status: 'accepted' } } });
  });

  it('without a token: refused where App Check is enforced, accepted where it is not (the plain local stack)', async () => {
    const answer = await callCallable(e2e.stack, name, data(), { url: url() });
    if (e2e.appCheck) {
      expect(answer).toEqual({
        status: 401,
        body: { error: { status: 'UNAUTHENTICATED', message: 'This request has no valid App Check token.' } },
      });
    } else {
      expect(answer).toEqual({ status: 200, body: { result: { status: 'accepted' } } });
    }
  });
});

it('the sync has no rewrite: /api/sync-emails-to-mailerlite is the app shell, not the function', async () => {
  const response = await fetch(`${e2e.stack.siteUrl}/api/${CALLABLES.syncEmails}`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/html');
  await response.arrayBuffer();
});

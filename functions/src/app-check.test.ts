// App Check enforcement, switched by the ENFORCE_APP_CHECK param as the runtime provides it (an
// environment variable), through the three deployable callables called with `.run`: the request their
// handler receives, with `app` set when firebase-functions verified an X-Firebase-AppCheck token.

import type { DocumentReference } from 'firebase-admin/firestore';
import { type CallableRequest, HttpsError } from 'firebase-functions/v2/https';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testBed } from '../test-support/bed';
import { expectHttpsError } from '../test-support/callables';
import { PROJECT_ID } from '../test-support/firestore';
import { recordingLogger } from '../test-support/logs';
import { HERO, seedSignups } from '../test-support/signups';
import { withAppCheck } from './app-check';
import { addContactToMailerlite, sendThankYouEmail } from './callables/signup-callables';
import { syncEmailsToMailerlite } from './callables/sync-callable';
import { SIGNUPS, THANK_YOU_MAILS } from './contract';
import { applyToParts } from './delivery/part-life';

type AppCheckData = NonNullable<CallableRequest['app']>;

const APP_ID = '1:123456789012:web:0123456789abcdef';

/** What firebase-functions puts in `request.app` once it has verified an App Check token. */
const VERIFIED: AppCheckData = {
  appId: APP_ID,
  token: {
    iss: 'https://firebaseappcheck.googleapis.com/123456789012',
    sub: APP_ID,
    aud: ['projects/123456789012', `projects/${PROJECT_ID}`],
    exp: Math.floor(Date.now() / 1000) + 3600,
    iat: Math.floor(Date.now() / 1000),
    app_id: APP_ID,
  },
};

function request<Data>(data: Data, app?: AppCheckData): CallableRequest<Data> {
  return { data, app, rawRequest: {}, acceptsStreaming: false } as CallableRequest<Data>;
}

function setEnforcement(value: string | undefined) {
  if (value === undefined) delete process.env.ENFORCE_APP_CHECK;
  else process.env.ENFORCE_APP_CHECK = value;
}

afterEach(() => setEnforcement(undefined));

describe('withAppCheck', () => {
  const handled: CallableRequest<unknown>[] = [];
  const logger = recordingLogger();
  const guarded = withAppCheck(
    'sync-emails-to-mailerlite',
    async (received: CallableRequest<unknown>) => {
      handled.push(received);
      return 'handled';
    },
    logger,
  );
  beforeEach(() => {
    handled.length = 0;
    logger.entries.length = 0;
  });

  it.each([
    ['unset', undefined],
    ['false', 'false'],
  ])('lets every call through while ENFORCE_APP_CHECK is %s', async (_, value) => {
    setEnforcement(value);
    const withoutToken = request({ n: 1 });
    await expect(guarded(withoutToken)).resolves.toBe('handled');
    await expect(guarded(request({ n: 2 }, VERIFIED))).resolves.toBe('handled');
    expect(handled).toEqual([withoutToken, request({ n: 2 }, VERIFIED)]);
    expect(logger.entries).toEqual([]);
  });

  it('refuses a call without a verified token when ENFORCE_APP_CHECK is true, before the handler runs', async () => {
    setEnforcement('true');
    const error = await expectHttpsError(guarded(request({ n: 1 })), 'unauthenticated');
    expect(error.httpErrorCode.status).toBe(401);
    expect(handled).toEqual([]);
    expect(logger.entries).toEqual([
      { severity: 'warn', event: 'app_check.refused', fields: { callable: 'sync-emails-to-mailerlite' } },
    ]);
  });

  it('passes a call with a verified token when ENFORCE_APP_CHECK is true', async () => {
    setEnforcement('true');
    await expect(guarded(request({ n: 1 }, VERIFIED))).resolves.toBe('handled');
    expect(handled.map((received) => received.app?.appId)).toEqual([APP_ID]);
  });

  it('takes only the exact value "true" as on, as firebase-functions parses a boolean param', async () => {
    for (const value of ['TRUE', '1', 'yes', '']) {
      setEnforcement(value);
      await expect(guarded(request({ value }))).resolves.toBe('handled');
    }
  });
});

describe('the three callables, with ENFORCE_APP_CHECK', () => {
  const bed = testBed({ deployed: true });

  beforeEach(async () => {
    await seedSignups(bed.db, [{ email: 'kid@example.com', ...HERO }]);
  });

  const calls = (app?: AppCheckData) => ({
    'add-contact-to-mailerlite': () =>
      addContactToMailerlite.run(request({ email: 'kid@example.com', source: 'hero_form' }, app)),
    'send-thank-you-email': () => sendThankYouEmail.run(request({ email: 'kid@example.com' }, app)),
    'sync-emails-to-mailerlite': () => syncEmailsToMailerlite.run(request(null, app)),
  });

  async function nothingHappened() {
    expect(bed.ml.state.requests).toEqual([]);
    expect(bed.tasks.tasks).toEqual([]);
    expect(await bed.outbox.messages()).toEqual([]);
    expect((await bed.db.collection(THANK_YOU_MAILS).get()).size).toBe(0);
    expect((await bed.db.doc('_sync/mailerlite').get()).exists).toBe(false);
  }

  /** The seeded sign-up through all three in the site's order: added, thanked, synced. */
  async function expectTheSignUpGoesThrough(call: ReturnType<typeof calls>) {
    expect(await call['add-contact-to-mailerlite']()).toEqual({ status: 'accepted' });
    expect(await call['send-thank-you-email']()).toEqual({ status: 'accepted' });
    // The callables make no work: the row's trigger enqueues it (delivery/index-signup.ts).
    expect(bed.tasks.tasks).toEqual([]);
    // The row's own task delivered its contact: the sync reads it there and hands nothing over.
    const [row] = (await bed.db.collection(SIGNUPS).get()).docs;
    await applyToParts(row?.ref as DocumentReference, [['contact', { kind: 'done', round: 0 }]], Date.now());
    expect(await call['sync-emails-to-mailerlite']()).toMatchObject({
      success: true,
      error: null,
      synced: 1,
    });
    expect(bed.tasks.tasks).toEqual([]);
  }

  it.each(Object.keys(calls()))(
    '%s refuses a call without a token when it is true: nothing is read from MailerLite, written or sent',
    async (name) => {
      setEnforcement('true');
      const call = calls()[name as keyof ReturnType<typeof calls>];
      const error = await call().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(HttpsError);
      expect(error).toMatchObject({ code: 'unauthenticated' });
      await nothingHappened();
    },
  );

  it('runs a sign-up through all three with a verified token when it is true', async () => {
    setEnforcement('true');
    await expectTheSignUpGoesThrough(calls(VERIFIED));
  });

  it('runs a sign-up through all three without a token when it is false, as it always did', async () => {
    setEnforcement('false');
    await expectTheSignUpGoesThrough(calls());
  });
});

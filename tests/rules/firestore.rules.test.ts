import { readFileSync } from 'node:fs';
import {
  assertFails,
  assertSucceeds,
  initializeTestEnvironment,
  type RulesTestContext,
  type RulesTestEnvironment,
} from '@firebase/rules-unit-testing';
import { afterAll, beforeAll, beforeEach, describe, inject, it } from 'vitest';
import type {} from '../support/firestore-emulator.setup.ts';
import { addressesTheFormAccepts, addressOfLength, malformedAddresses } from './email-cases.ts';
import {
  addDoc,
  collection,
  type DocumentData,
  deleteDoc,
  doc,
  type Firestore,
  getDoc,
  getDocs,
  limit,
  query,
  serverTimestamp,
  setDoc,
  setLogLevel,
  Timestamp,
  updateDoc,
} from './firestore-sdk.ts';

const PROJECT_ID = 'demo-goody';
const RULES = readFileSync(new URL('../../firestore.rules', import.meta.url), 'utf8');

let testEnv: RulesTestEnvironment;

beforeAll(async () => {
  // Permission-denied answers are the point of most cases below; the SDK would log each one as a warning.
  setLogLevel('error');
  testEnv = await initializeTestEnvironment({
    projectId: PROJECT_ID,
    firestore: { rules: RULES, ...hostAndPort(inject('firestoreEmulatorHost')) },
  });
});

beforeEach(async () => {
  await testEnv.clearFirestore();
});

afterAll(async () => {
  await testEnv?.cleanup();
});

function hostAndPort(hostPort: string): { host: string; port: number } {
  const [host = '', port = ''] = hostPort.split(':');
  return { host, port: Number(port) };
}

// The compat instance rules-unit-testing returns wraps a modular one; the modular functions unwrap it.
function firestoreOf(context: RulesTestContext): Firestore {
  return context.firestore() as unknown as Firestore;
}

async function seed(path: string, data: DocumentData): Promise<void> {
  await testEnv.withSecurityRulesDisabled(async (context) => {
    await setDoc(doc(firestoreOf(context), path), data);
  });
}

type SignupFields = Record<string, unknown>;

const heroSignup = (): SignupFields => ({
  email: 'teen@example.com',
  subscription_type: 'updates',
  source: 'hero_form',
  created_at: serverTimestamp(),
});

const finalSignup = (): SignupFields => ({
  email: 'teen@example.com',
  subscription_type: 'club',
  source: 'final_cta',
  created_at: serverTimestamp(),
});

function without(fields: SignupFields, key: string): SignupFields {
  const { [key]: _dropped, ...rest } = fields;
  return rest;
}

const STORED_SIGNUP = {
  email: 'stored@example.com',
  subscription_type: 'updates',
  source: 'hero_form',
  created_at: Timestamp.fromDate(new Date('2024-05-01T10:00:00Z')),
};

// Auth plays no part in these rules (the product has no sign-in): a signed-in caller gets exactly what an
// anonymous visitor gets, so every case runs for both.
const callers = [
  { kind: 'an unauthenticated visitor', context: () => testEnv.unauthenticatedContext() },
  {
    kind: 'a signed-in user',
    context: () =>
      testEnv.authenticatedContext('alice', { email: 'alice@example.com', email_verified: true }),
  },
];

describe.each(callers)('Firestore rules for $kind', ({ context }) => {
  let db: Firestore;

  beforeEach(() => {
    db = firestoreOf(context());
  });

  const signups = () => collection(db, 'email_subscriptions');

  describe('email_subscriptions: creating a sign-up', () => {
    it('accepts the hero form sign-up (updates, hero_form) with an automatic id', async () => {
      await assertSucceeds(addDoc(signups(), heroSignup()));
    });

    it('accepts the final form sign-up (club, final_cta) with an automatic id', async () => {
      await assertSucceeds(addDoc(signups(), finalSignup()));
    });

    it('accepts a short address (a@b.c) and the longest (254 characters)', async () => {
      await assertSucceeds(addDoc(signups(), { ...heroSignup(), email: 'a@b.c' }));
      await assertSucceeds(addDoc(signups(), { ...heroSignup(), email: addressOfLength(254) }));
    });

    it('accepts addresses the form accepts: plus tags, subdomains, digits, hyphens, upper case, 63-character labels', async () => {
      for (const email of addressesTheFormAccepts) {
        await assertSucceeds(addDoc(signups(), { ...heroSignup(), email }));
      }
    });

    it.each(['email', 'subscription_type', 'source', 'created_at'])(
      'refuses a sign-up without %s',
      async (key) => {
        await assertFails(addDoc(signups(), without(heroSignup(), key)));
      },
    );

    it.each([
      ['email', 42],
      ['email', true],
      ['email', null],
      ['email', ['teen@example.com']],
      ['email', { address: 'teen@example.com' }],
      ['subscription_type', 1],
      ['subscription_type', null],
      ['subscription_type', ['updates']],
      ['source', false],
      ['source', null],
      ['source', { form: 'hero_form' }],
      ['created_at', '2024-05-01T10:00:00Z'],
      ['created_at', 1714557600000],
      ['created_at', null],
    ])('refuses %s of the wrong type (%j)', async (key, value) => {
      await assertFails(addDoc(signups(), { ...heroSignup(), [key]: value }));
    });

    it.each([
      ['a field the spec does not name', { name: 'Sam' }],
      ['a client-supplied id field', { id: 'chosen-id' }],
      ['a status flag a client could use to skip the sync', { synced: true }],
      ['a delivery state of its own (the server writes it)', { delivery: { contact: { state: 'done' } } }],
      ["a mailbox key of its choosing (the server's)", { mailbox_key: 'chosen-key' }],
    ])('refuses %s', async (_label, extra) => {
      await assertFails(addDoc(signups(), { ...heroSignup(), ...extra }));
    });

    it.each([
      ['updates', 'final_cta'],
      ['club', 'hero_form'],
    ])('refuses the mismatched pair subscription_type=%s, source=%s', async (subscriptionType, source) => {
      await assertFails(addDoc(signups(), { ...heroSignup(), subscription_type: subscriptionType, source }));
    });

    it.each([
      ['subscription_type', 'newsletter'],
      ['subscription_type', 'Updates'],
      ['subscription_type', ''],
      ['source', 'footer_form'],
      ['source', 'HERO_FORM'],
      ['source', ''],
    ])('refuses %s=%j, a value outside the spec', async (key, value) => {
      await assertFails(addDoc(signups(), { ...heroSignup(), [key]: value }));
    });

    it('refuses an address of 255 characters, one past the limit', async () => {
      await assertFails(addDoc(signups(), { ...heroSignup(), email: addressOfLength(255) }));
    });

    it.each(malformedAddresses)('refuses %j, which is not shaped like an address', async (email) => {
      await assertFails(addDoc(signups(), { ...heroSignup(), email }));
    });

    it.each([
      ['a backdated time', new Date('2024-01-01T00:00:00Z')],
      ['a time in the future', new Date('2099-01-01T00:00:00Z')],
    ])('refuses a client-chosen created_at (%s)', async (_label, when) => {
      await assertFails(addDoc(signups(), { ...heroSignup(), created_at: Timestamp.fromDate(when) }));
    });

    it('accepts a create under an id of the shape addDoc makes (20 of [A-Za-z0-9]), set by the client', async () => {
      await assertSucceeds(setDoc(doc(signups(), 'AbCdEfGhIj0123456789'), heroSignup()));
    });

    it.each([
      ['an address', 'kid@example.com'],
      ['a +tag address', 'kid+x@school-example.org'],
      ['an address shaped to 20 characters', 'kid@school-example.o'],
      ['a word', 'stored-later'],
      ['19 characters', 'AbCdEfGhIj012345678'],
      ['21 characters', 'AbCdEfGhIj01234567890'],
      ['20 characters with a hyphen', 'AbCdEfGhIj-123456789'],
      ['20 characters with an underscore', 'AbCdEfGhIj_123456789'],
    ])('refuses a create under an id the SDK never makes: %s (%j)', async (_label, id) => {
      await assertFails(setDoc(doc(signups(), id), heroSignup()));
    });

    it('refuses a write into a subcollection of a sign-up', async () => {
      await seed('email_subscriptions/stored', STORED_SIGNUP);
      await assertFails(setDoc(doc(db, 'email_subscriptions/stored/notes/n1'), heroSignup()));
    });
  });

  describe('email_subscriptions: nothing else', () => {
    beforeEach(async () => {
      await seed('email_subscriptions/stored', STORED_SIGNUP);
    });

    it('refuses reading a stored sign-up (get)', async () => {
      await assertFails(getDoc(doc(db, 'email_subscriptions/stored')));
    });

    it('refuses reading a sign-up that does not exist (get)', async () => {
      await assertFails(getDoc(doc(db, 'email_subscriptions/missing')));
    });

    it('refuses listing sign-ups (list)', async () => {
      await assertFails(getDocs(signups()));
    });

    it("refuses the spec's one-row connection-test query on email_subscriptions (the app reads public/health instead)", async () => {
      await assertFails(getDocs(query(signups(), limit(1))));
    });

    it('refuses updating a stored sign-up', async () => {
      await assertFails(updateDoc(doc(db, 'email_subscriptions/stored'), { source: 'final_cta' }));
    });

    it("refuses touching a stored sign-up's delivery state (settling or re-driving it is the server's)", async () => {
      await assertFails(
        updateDoc(doc(db, 'email_subscriptions/stored'), { 'delivery.thank_you.state': 'done' }),
      );
      await assertFails(updateDoc(doc(db, 'email_subscriptions/stored'), { 'delivery.contact.round': 9 }));
    });

    it('refuses overwriting a stored sign-up, even with a valid sign-up', async () => {
      await assertFails(setDoc(doc(db, 'email_subscriptions/stored'), heroSignup()));
    });

    it('refuses deleting a stored sign-up', async () => {
      await assertFails(deleteDoc(doc(db, 'email_subscriptions/stored')));
    });
  });

  describe('public/health: the connection-test document', () => {
    it('allows reading it when it does not exist', async () => {
      await assertSucceeds(getDoc(doc(db, 'public/health')));
    });

    it('allows reading it when it exists', async () => {
      await seed('public/health', { ok: true });
      const snapshot = await assertSucceeds(getDoc(doc(db, 'public/health')));
      if (!snapshot.exists()) throw new Error('the seeded health document should be readable and present');
    });

    it('refuses creating it', async () => {
      await assertFails(setDoc(doc(db, 'public/health'), { ok: true }));
    });

    it('refuses overwriting, updating or deleting it', async () => {
      await seed('public/health', { ok: true });
      await assertFails(setDoc(doc(db, 'public/health'), { ok: false }));
      await assertFails(updateDoc(doc(db, 'public/health'), { ok: false }));
      await assertFails(deleteDoc(doc(db, 'public/health')));
    });

    it('refuses listing the public collection', async () => {
      await seed('public/health', { ok: true });
      await assertFails(getDocs(collection(db, 'public')));
    });

    it('refuses reading any other document of the public collection', async () => {
      await seed('public/other', { ok: true });
      await assertFails(getDoc(doc(db, 'public/other')));
    });
  });

  describe.each([
    ['the MailerLite sync state', '_sync/mailerlite', { state: 'idle', lease_until: null }],
    ['a thank-you record', 'thank_you_mails/3b1f0c9e', { status: 'sent' }],
    ['an unknown collection', 'anything_else/doc', { any: 'thing' }],
  ])('%s (%s): no client access', (_label, path, data) => {
    const parent = path.slice(0, path.indexOf('/'));

    it('refuses reading it', async () => {
      await seed(path, data);
      await assertFails(getDoc(doc(db, path)));
    });

    it('refuses listing its collection', async () => {
      await seed(path, data);
      await assertFails(getDocs(collection(db, parent)));
    });

    it('refuses creating it', async () => {
      await assertFails(setDoc(doc(db, path), data));
    });

    it('refuses changing or deleting it', async () => {
      await seed(path, data);
      await assertFails(setDoc(doc(db, path), { ...data, changed: true }));
      await assertFails(updateDoc(doc(db, path), { changed: true }));
      await assertFails(deleteDoc(doc(db, path)));
    });
  });
});

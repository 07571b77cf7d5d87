// What the landing page really writes and reads, through the page's own code (web/src/lib/firebase.ts on
// firebase/firestore/lite, the SDK the site ships), against the Firebase Firestore emulator enforcing
// firestore.rules: the two forms' payloads as the e2e suite submits them are stored with exactly their four
// fields, a payload the rules refuse surfaces the database's own message (what the Database Error toast
// shows), and the connection test reads public/health.
import { readFileSync } from 'node:fs';
import { initializeTestEnvironment, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type {} from '../support/firestore-emulator.setup.ts';
import { collection, type Firestore, getDocs, setLogLevel, Timestamp } from './firestore-sdk.ts';

// A project of its own in the suite's one emulator (firestore.rules.test.ts clears demo-goody between its cases).
const PROJECT_ID = 'demo-goody-page-writes';
const RULES = readFileSync(new URL('../../firestore.rules', import.meta.url), 'utf8');

/** The part of web/src/lib/firebase.ts this suite drives (typed here: the web package has its own compiler settings). */
interface PageBackend {
  insertSubscription(signup: {
    email: string;
    subscription_type: 'updates' | 'club';
    source: 'hero_form' | 'final_cta';
  }): Promise<{ id: string }>;
  connectionTest(): Promise<void>;
}
let page: PageBackend;
let testEnv: RulesTestEnvironment;

beforeAll(async () => {
  setLogLevel('error');
  const hostPort = inject('firestoreEmulatorHost');
  const [host = '', port = ''] = hostPort.split(':');
  testEnv = await initializeTestEnvironment({
    projectId: PROJECT_ID,
    firestore: { rules: RULES, host, port: Number(port) },
  });
  // What a local build of the site is given (dev/launcher/builds.ts): the demo project on the emulators.
  Object.assign(process.env, {
    VITE_FIREBASE_PROJECT_ID: PROJECT_ID,
    VITE_USE_EMULATORS: 'true',
    VITE_FIRESTORE_EMULATOR_HOST: hostPort,
    VITE_FUNCTIONS_EMULATOR_HOST: '127.0.0.1:9',
  });
  page = (await import(
    /* @vite-ignore */ new URL('../../web/src/lib/firebase.ts', import.meta.url).href
  )) as PageBackend;
});

beforeEach(async () => {
  await testEnv.clearFirestore();
});

afterAll(async () => {
  await testEnv?.cleanup();
});

/** Every stored sign-up, read past the rules (no client may read them). */
async function storedSignups(): Promise<Record<string, unknown>[]> {
  let rows: Record<string, unknown>[] = [];
  await testEnv.withSecurityRulesDisabled(async (context) => {
    const db = context.firestore() as unknown as Firestore;
    rows = (await getDocs(collection(db, 'email_subscriptions'))).docs.map((d) => d.data());
  });
  return rows;
}

const uniqueEmail = (label: string) => `e2e-${label}-${Date.now().toString(36)}ab12@example.com`;

describe("the page's own insert (web/src/lib/firebase.ts) under firestore.rules", () => {
  it.each([
    { form: 'the hero form', subscription_type: 'updates', source: 'hero_form' },
    { form: 'Join the Club', subscription_type: 'club', source: 'final_cta' },
  ] as const)(
    'stores $form’s sign-up with exactly its four fields',
    async ({ subscription_type, source }) => {
      const email = uniqueEmail(source);
      const { id } = await page.insertSubscription({ email, subscription_type, source });
      expect(id).toMatch(/^[A-Za-z0-9]{20}$/);
      const rows = await storedSignups();
      expect(rows).toHaveLength(1);
      expect(Object.keys(rows[0] ?? {}).sort()).toEqual([
        'created_at',
        'email',
        'source',
        'subscription_type',
      ]);
      expect(rows[0]).toMatchObject({ email, subscription_type, source });
      expect(rows[0]?.created_at).toBeInstanceOf(Timestamp);
    },
  );

  it("surfaces the database's own refusal for a payload the rules refuse, and stores nothing", async () => {
    const refused = page.insertSubscription({
      email: uniqueEmail('refused'),
      // The pair of neither form: the rules accept updates/hero_form and club/final_cta only.
      subscription_type: 'updates',
      source: 'final_cta',
    });
    await expect(refused).rejects.toMatchObject({
      code: 'permission-denied',
      message: expect.stringContaining("false for 'create'"),
    });
    expect(await storedSignups()).toEqual([]);
  });

  it('passes the connection test: public/health is readable, whether or not it exists', async () => {
    await expect(page.connectionTest()).resolves.toBeUndefined();
  });
});

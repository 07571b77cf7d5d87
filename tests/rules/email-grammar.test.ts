// One address grammar for the database and the functions: every address of one table goes through the real
// firestore.rules on the Firestore emulator (a sign-up created by a visitor) and through the functions'
// emailProblem (contract/src/email.ts), and both must give the table's verdict. A row the rules store is then
// always one the functions can sync, thank and erase, and a row they would refuse never gets in.

import { readFileSync } from 'node:fs';
import { initializeTestEnvironment, type RulesTestEnvironment } from '@firebase/rules-unit-testing';
import { emailProblem } from '@goody/contract';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type {} from '../support/firestore-emulator.setup.ts';
import { emailGrammarTable } from './email-cases.ts';
import { addDoc, collection, type Firestore, serverTimestamp, setLogLevel } from './firestore-sdk.ts';

let testEnv: RulesTestEnvironment;
let db: Firestore;

beforeAll(async () => {
  setLogLevel('error');
  const [host = '', port = ''] = inject('firestoreEmulatorHost').split(':');
  testEnv = await initializeTestEnvironment({
    projectId: 'demo-goody-grammar',
    firestore: {
      rules: readFileSync(new URL('../../firestore.rules', import.meta.url), 'utf8'),
      host,
      port: Number(port),
    },
  });
  db = testEnv.unauthenticatedContext().firestore() as unknown as Firestore;
});

afterAll(async () => {
  await testEnv?.cleanup();
});

/** Whether the rules let a visitor store a hero-form sign-up with this address. */
async function rulesAccept(email: string): Promise<boolean> {
  try {
    await addDoc(collection(db, 'email_subscriptions'), {
      email,
      subscription_type: 'updates',
      source: 'hero_form',
      created_at: serverTimestamp(),
    });
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'permission-denied') return false;
    throw error;
  }
}

describe('the address grammar: firestore.rules and the functions accept exactly the same set', () => {
  it.each(
    emailGrammarTable.map(([address, accepted]) => [JSON.stringify(address), address, accepted] as const),
  )('%s', async (_label, address, accepted) => {
    expect(emailProblem(address) === null, 'the functions').toBe(accepted);
    expect(await rulesAccept(address), 'firestore.rules').toBe(accepted);
  });
});

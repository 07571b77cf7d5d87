// A sync run in a process of its own, for the test that kills it with SIGKILL mid-run: no finally
// block, no lease release, exactly what a crashed or timed-out instance leaves behind.
// Env: FIRESTORE_EMULATOR_HOST, GCLOUD_PROJECT, MAILERLITE_BASE_URL, MAILERLITE_API_KEY, GROUP_UPDATES, GROUP_CLUB, LEASE_MS.

import { deleteApp, initializeApp } from 'firebase-admin/app';
import { getFirestore } from 'firebase-admin/firestore';
import { handleSyncEmailsToMailerlite } from '../src/callables/sync-callable';
import { systemClock } from '../src/clock';
import { MailerLiteClient } from '../src/mailerlite/client';
import { Mailboxes } from '../src/privacy/mailboxes';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

async function main(): Promise<void> {
  const app = initializeApp({ projectId: env('GCLOUD_PROJECT') }, 'sync-child');
  const silent = { info() {}, warn() {}, error() {} };
  const db = getFirestore(app);
  const reply = await handleSyncEmailsToMailerlite(null, {
    db,
    client: new MailerLiteClient({ apiKey: env('MAILERLITE_API_KEY'), baseUrl: env('MAILERLITE_BASE_URL') }),
    groups: { updates: env('GROUP_UPDATES'), club: env('GROUP_CLUB') },
    clock: systemClock,
    logger: silent,
    deadline: Date.now() + 540_000,
    options: { leaseMs: Number(env('LEASE_MS')), minIntervalMs: 0 },
    mailboxes: new Mailboxes(db, {
      mailbox: 'test-mailbox-key-secret',
      unsubscribe: 'test-unsubscribe-secret',
    }),
  });
  process.stdout.write(`${JSON.stringify(reply)}\n`);
  await deleteApp(app);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

// The params of the deployed functions, as the launcher sets them, for the tests that run the onCall wrappers.

import type { MailerLiteStandIn } from '../../stand-ins/mailerlite/index.ts';
import type { SmtpOutbox } from '../../stand-ins/smtp/index.ts';
import type { FirestoreHarness } from './firestore';
import { GROUPS } from './mailerlite';
import { MAILBOX_SECRET, UNSUBSCRIBE_SECRET } from './signups';

/**
 * Sets in process.env the params functions/.env.local and .secret.local hold when the launcher runs the
 * emulator, pointed at these stand-ins: what the onCall wrappers read through firebase-functions/params.
 */
export function setLauncherParams(standIns: {
  firestore: FirestoreHarness;
  ml: MailerLiteStandIn;
  outbox: SmtpOutbox;
}): void {
  const { firestore, ml, outbox } = standIns;
  Object.assign(process.env, {
    GCLOUD_PROJECT: firestore.projectId,
    FIRESTORE_EMULATOR_HOST: firestore.hostPort,
    MAILERLITE_API_KEY: ml.apiKey,
    MAILERLITE_BASE_URL: ml.baseUrl,
    MAILERLITE_GROUP_UPDATES: GROUPS.updates,
    MAILERLITE_GROUP_CLUB: GROUPS.club,
    SMTP_URL: outbox.url,
    MAIL_FROM: 'GOODY <hello@goody.example>',
    UNSUBSCRIBE_URL: 'http://127.0.0.1:5001/demo-goody/us-central1/unsubscribe',
    UNSUBSCRIBE_SECRET,
    MAILBOX_KEY_SECRET: MAILBOX_SECRET,
  });
}

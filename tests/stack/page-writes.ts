// What the landing page writes for a sign-up, as the stack tests make it: the sign-up document over Firestore's
// REST API with no owner credential (so firestore.rules apply), the four fields, created_at the server's time.

import { randomInt } from 'node:crypto';
import { type SignupSource, subscriptionTypeOf } from '@goody/contract';
import { expect } from 'vitest';

const DOCUMENTS = 'projects/demo-goody/databases/(default)/documents';

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A document id of the shape the web SDK's addDoc makes, 20 of [A-Za-z0-9]: the only one firestore.rules
 * lets a sign-up have. `label` (letters and digits) starts it, so a reader of the emulator's data knows the
 * row; the rest is random.
 */
export function pageDocumentId(label = ''): string {
  if (!/^[A-Za-z0-9]{0,12}$/.test(label)) throw new Error(`not a label for a page id: ${label}`);
  let id = label;
  while (id.length < 20) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

/** Stores the sign-up under `id` (pageDocumentId) (a create: refused if it exists) on the emulator at `firestoreHostPort`. */
export async function storeSignupAsThePage(
  firestoreHostPort: string,
  id: string,
  email: string,
  source: SignupSource = 'hero_form',
): Promise<void> {
  const response = await fetch(`http://${firestoreHostPort}/v1/${DOCUMENTS}:commit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      writes: [
        {
          update: {
            name: `${DOCUMENTS}/email_subscriptions/${id}`,
            fields: {
              email: { stringValue: email },
              subscription_type: { stringValue: subscriptionTypeOf(source) },
              source: { stringValue: source },
            },
          },
          currentDocument: { exists: false },
          updateTransforms: [{ fieldPath: 'created_at', setToServerValue: 'REQUEST_TIME' }],
        },
      ],
    }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  await response.arrayBuffer();
}

/**
 * The one module that initialises Firebase and wires the emulators. It runs once, at module level,
 * and is only ever loaded through `loadBackend()` (a dynamic import), so the Firestore and Functions
 * SDKs stay out of the landing page's initial JavaScript.
 *
 * Only `firebase/app`, `firebase/firestore/lite` and `firebase/functions` are used: Lite speaks plain
 * REST, is a fraction of the full SDK and fails fast when offline; the site needs no listeners.
 * `firebase/app-check` joins them only in a build given an App Check site key (see below).
 */
import { FirebaseError, initializeApp } from 'firebase/app';
import {
  addDoc,
  collection,
  connectFirestoreEmulator,
  doc,
  getDoc,
  getFirestore,
  serverTimestamp,
  setLogLevel,
} from 'firebase/firestore/lite';
import { connectFunctionsEmulator, getFunctions, httpsCallable } from 'firebase/functions';
import { readFirebaseSettings } from './config';
import type { AddContactRequest, NewSubscription, SyncResponse, ThankYouRequest } from './subscriptions';

export const settings = readFirebaseSettings(import.meta.env);

const app = initializeApp({ projectId: settings.projectId, apiKey: settings.apiKey, appId: settings.appId });

// App Check starts before Firestore and Functions are used (as Firebase asks), and this module is
// ready only once it has, so no request can be made before App Check can supply a token. Testing
// import.meta.env's variable itself is what Vite settles at build time: a build without a site key
// drops the branch and, with it, the App Check SDK and the reCAPTCHA script it would load.
if (import.meta.env.VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY && settings.appCheck) {
  const { startAppCheck } = await import('./app-check');
  startAppCheck(app, settings.appCheck.recaptchaEnterpriseSiteKey);
}

const firestore = getFirestore(app);
const functions = getFunctions(app, settings.functionsRegion);

// Firestore's warning for a failed request prints the whole request, the visitor's e-mail address
// included. Our own handling reports failures without it (DESIGN.md section 3), so only errors pass.
setLogLevel('error');

if (settings.emulators) {
  connectFirestoreEmulator(firestore, settings.emulators.firestore.host, settings.emulators.firestore.port);
  connectFunctionsEmulator(functions, settings.emulators.functions.host, settings.emulators.functions.port);
}

/** The connection-test document: public, read by anyone, and it need not exist. */
const HEALTH_DOCUMENT = ['public', 'health'] as const;
const SUBSCRIPTIONS = 'email_subscriptions';

/**
 * Proves the database answers before a sign-up (spec section 7, call 1) by reading one public
 * document. It never reads `email_subscriptions`: no client may read subscriber data.
 */
export async function connectionTest(): Promise<void> {
  await getDoc(doc(firestore, ...HEALTH_DOCUMENT));
}

const LITE_TRANSPORT_PREFIX = 'Request failed with error: ';

/**
 * Firestore Lite reports a refused request as "Request failed with error: <the server's message>",
 * and a request that never got an answer as "Request failed with error: undefined". The visitor is
 * shown the database's own message (spec section 8), so the transport wording comes off, and a
 * failure without a message from the database keeps an empty message.
 */
function withDatabaseMessage(error: unknown): unknown {
  // FirebaseError resets its prototype, so Firestore's errors only answer to `instanceof FirebaseError`.
  if (!(error instanceof FirebaseError) || !error.message.startsWith(LITE_TRANSPORT_PREFIX)) return error;
  const message = error.message.slice(LITE_TRANSPORT_PREFIX.length).trim();
  return new FirebaseError(error.code, message === 'undefined' ? '' : message);
}

/** Appends one sign-up with exactly the four fields the security rules accept; returns its id. */
export async function insertSubscription(subscription: NewSubscription): Promise<{ id: string }> {
  try {
    // Fields are picked one by one so nothing else a caller's object carries can reach the database.
    const ref = await addDoc(collection(firestore, SUBSCRIPTIONS), {
      email: subscription.email,
      subscription_type: subscription.subscription_type,
      source: subscription.source,
      created_at: serverTimestamp(),
    });
    return { id: ref.id };
  } catch (error) {
    throw withDatabaseMessage(error);
  }
}

/**
 * When a call gets no usable answer, the Functions SDK's error carries only its code as the message
 * ("internal", "INTERNAL", "deadline-exceeded"). That is no message for a person, so it becomes
 * empty and the screen shows its own wording (spec section 8).
 */
function withFunctionMessage(error: unknown): unknown {
  if (!(error instanceof FirebaseError)) return error;
  const code = error.code.replace(/^functions\//, '');
  const message = error.message.trim();
  if (message.toLowerCase().replace(/_/g, '-') !== code) return error;
  return new FirebaseError(error.code, '');
}

function callable<Request, Response>(name: string) {
  const call = httpsCallable<Request, Response>(functions, name);
  return async (request: Request): Promise<Response> => {
    try {
      return (await call(request)).data;
    } catch (error) {
      throw withFunctionMessage(error);
    }
  };
}

/** Callable `add-contact-to-mailerlite`; its reply is not part of the contract. */
export const addContactToMailerlite = callable<AddContactRequest, unknown>('add-contact-to-mailerlite');

/** Callable `send-thank-you-email`; its reply is not part of the contract. */
export const sendThankYouEmail = callable<ThankYouRequest, unknown>('send-thank-you-email');

const syncEmails = callable<Record<string, never>, SyncResponse | null>('sync-emails-to-mailerlite');

/** Callable `sync-emails-to-mailerlite` with an empty body; the reply is read for success/message/synced/error. */
export function syncEmailsToMailerlite(): Promise<SyncResponse | null> {
  return syncEmails({});
}

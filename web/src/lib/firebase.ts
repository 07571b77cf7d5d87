/**
 * The one module of the page that initialises Firebase and wires the emulators (through firebase-client.ts,
 * the client it shares with a bench and a stack test). It runs once, at module level, and is only ever
 * loaded through `loadBackend()` (a dynamic import), so the Firestore and Functions SDKs stay out of the
 * landing page's initial JavaScript.
 *
 * Only `firebase/app`, `firebase/firestore/lite` and `firebase/functions` are used: Lite speaks plain
 * REST, is a fraction of the full SDK and fails fast when offline; the site needs no listeners.
 * `firebase/app-check` joins them only in a build given an App Check site key (see below).
 */
import {
  CALLABLES,
  type CallableName,
  type CallableReplies,
  type CallableRequests,
  type NewSignup,
  type SyncReply,
} from '@goody/contract';
import { FirebaseError } from 'firebase/app';
import { setLogLevel } from 'firebase/firestore/lite';
import { httpsCallable, httpsCallableFromURL } from 'firebase/functions';
import { callablePath, readFirebaseSettings, SITE_CALLABLES } from './config';
import { withDeadline } from './deadline';
import { addSignup, firebaseApp, firebaseServices, readHealthDocument } from './firebase-client';

export const settings = readFirebaseSettings(import.meta.env);

const app = firebaseApp(settings);

// App Check starts before Firestore and Functions are used (as Firebase asks), and this module is
// ready only once it has, so no request can be made before App Check can supply a token. Testing
// import.meta.env's variable itself is what Vite settles at build time: a build without a site key
// drops the branch and, with it, the App Check SDK and the reCAPTCHA script it would load.
if (import.meta.env.VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY && settings.appCheck) {
  const { startAppCheck } = await import('./app-check');
  startAppCheck(app, settings.appCheck.recaptchaEnterpriseSiteKey);
}

const { firestore, functions } = firebaseServices(app, settings);

// Firestore's warning for a failed request prints the whole request, the visitor's e-mail address
// included. Our own handling reports failures without it (docs/architecture.md, Privacy), so only errors pass.
setLogLevel('error');

/**
 * How long each call may take before the visitor is told something (ms). Firestore Lite fails at once
 * when the device is offline or a connection is refused, but a connection that stays open with no
 * answer (a service that stopped responding, a captive portal, a stalled mobile link) would keep the
 * button spinning for ever: every call here has a bound.
 */
export const deadlines = {
  /**
   * 10 s: the read is one small REST request, answered in well under a second even on a slow mobile
   * link (DNS, TLS and a round trip or two), so 10 s is far past its long tail, yet within the ~10 s a
   * person keeps waiting on an action before giving up on it. A timeout is a failed connection test.
   */
  connectionTestMs: 10_000,
  /**
   * 10 s, as the read: one small request right after the database has answered. A timed-out insert is
   * an insert failure with no database message. The write may still land after we stop waiting (a
   * request cannot be cancelled); a retry then stores a second sign-up, which is fine by design:
   * sign-ups are an append-only log and duplicates are handled downstream (docs/architecture.md, Firestore rules and data).
   */
  insertMs: 10_000,
  /**
   * 20 s for add-contact-to-mailerlite and send-thank-you-email, which only check the body and answer (the
   * stored row's trigger enqueues its delivery, whatever becomes of these calls): a cold start at worst.
   * Their failures are only logged, so past this the visitor gets their success instead of a longer wait;
   * the sign-up is stored and delivered all the same. (The SDK's default is 70 s.)
   */
  signupCallableMs: 20_000,
  /**
   * sync-emails-to-mailerlite runs for up to its `timeoutSeconds`, 540 s
   * (functions/src/callables/sync-callable.ts, SYNC_TIMEOUT_SECONDS), and answers with what
   * it did. The client waits 30 s longer (a cold start and the reply's trip back) so it never gives up
   * before the server answers; only a reply that never comes ends in the Sync Failed toast.
   */
  syncCallableMs: (540 + 30) * 1000,
} as const;

/**
 * A call that outlived its deadline: a failure with no message from the database, so the screen
 * shows its own wording (docs/product.md, Error catalogue and toasts).
 */
const timedOut = () => new FirebaseError('deadline-exceeded', '');

/**
 * Proves the database answers before a sign-up (docs/product.md, One sign-up, step 1) by reading one public
 * document. It never reads `email_subscriptions`: no client may read subscriber data.
 */
export async function connectionTest(): Promise<void> {
  await withDeadline(readHealthDocument(firestore), deadlines.connectionTestMs, timedOut);
}

/**
 * The connection test's read, made while the address is typed, its answer thrown away (backend.ts,
 * prepareSignup). Firestore Lite's requests carry headers that are not CORS-safelisted, so the browser asks
 * Firestore's preflight before each URL's first request; this one asks it for `documents:batchGet` before the
 * press, so the press's connection test, still made there, goes without one while the browser keeps it.
 */
export async function warmConnectionTest(): Promise<void> {
  try {
    await connectionTest();
  } catch {
    // Nothing to tell: the press's own connection test reports a database that does not answer.
  }
}

const LITE_TRANSPORT_PREFIX = 'Request failed with error: ';

/**
 * Firestore Lite reports a refused request as "Request failed with error: <the server's message>",
 * and a request that never got an answer as "Request failed with error: undefined". The visitor is
 * shown the database's own message (docs/product.md, Error catalogue and toasts), so the transport wording comes off, and a
 * failure without a message from the database keeps an empty message.
 */
function withDatabaseMessage(error: unknown): unknown {
  // FirebaseError resets its prototype, so Firestore's errors only answer to `instanceof FirebaseError`.
  if (!(error instanceof FirebaseError) || !error.message.startsWith(LITE_TRANSPORT_PREFIX)) return error;
  const message = error.message.slice(LITE_TRANSPORT_PREFIX.length).trim();
  return new FirebaseError(error.code, message === 'undefined' ? '' : message);
}

/** Appends one sign-up with exactly the four fields the security rules accept; returns its id. */
export async function insertSubscription(subscription: NewSignup): Promise<{ id: string }> {
  try {
    const ref = await withDeadline(addSignup(firestore, subscription), deadlines.insertMs, timedOut);
    return { id: ref.id };
  } catch (error) {
    throw withDatabaseMessage(error);
  }
}

/**
 * When a call gets no usable answer, the Functions SDK's error carries only its code as the message
 * ("internal", "INTERNAL", "deadline-exceeded"). That is no message for a person, so it becomes
 * empty and the screen shows its own wording (docs/product.md, Error catalogue and toasts).
 */
function withFunctionMessage(error: unknown): unknown {
  if (!(error instanceof FirebaseError)) return error;
  const code = error.code.replace(/^functions\//, '');
  const message = error.message.trim();
  if (message.toLowerCase().replace(/_/g, '-') !== code) return error;
  return new FirebaseError(error.code, '');
}

/**
 * The SDK bounds each call itself (`timeout`, clearing its timer when the call settles); a call that
 * outlives it rejects with functions/deadline-exceeded, whose message is only its code.
 *
 * The two sign-up callables are called on the page's own origin, at the paths Hosting rewrites to their
 * functions (config.ts, SITE_CALLABLES; firebase.json): no CORS preflight, no second HTTPS origin to open,
 * and the SDK attaches App Check's token to them as to any call. The sync is called on its function's own
 * host (the emulator on the local stack): Hosting would end it at 60 s.
 */
function callable<Name extends CallableName>(name: Name, timeout: number) {
  type Request = CallableRequests[Name];
  // The page reads only the sync's reply, and defensively: an older or newer function may answer
  // with fields missing.
  type Reply = Partial<CallableReplies[Name]> | null;
  // The page's origin is read at the call, so nothing here depends on a `location` before one is needed.
  const call = (SITE_CALLABLES as readonly CallableName[]).includes(name)
    ? (request: Request) =>
        httpsCallableFromURL<Request, Reply>(functions, new URL(callablePath(name), location.origin).href, {
          timeout,
        })(request)
    : httpsCallable<Request, Reply>(functions, name, { timeout });
  return async (request: Request): Promise<Reply> => {
    try {
      return (await call(request)).data;
    } catch (error) {
      throw withFunctionMessage(error);
    }
  };
}

/** Callable add-contact-to-mailerlite; the page only logs a failure of it. */
export const addContactToMailerlite = callable(CALLABLES.addContact, deadlines.signupCallableMs);

/** Callable send-thank-you-email; the page only logs a failure of it. */
export const sendThankYouEmail = callable(CALLABLES.sendThankYou, deadlines.signupCallableMs);

const syncEmails = callable(CALLABLES.syncEmails, deadlines.syncCallableMs);

/** Callable sync-emails-to-mailerlite with an empty body; the reply is read for success/message/synced/error. */
export function syncEmailsToMailerlite(): Promise<Partial<SyncReply> | null> {
  return syncEmails({});
}

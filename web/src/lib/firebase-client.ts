/**
 * The page's Firebase client, made from settings rather than from Vite env: the app, Firestore Lite and
 * Functions wired to the emulators when the settings name them, and the two Firestore requests of a sign-up.
 * firebase.ts makes the page's own from its build's settings; the load bench (tests/bench/load.ts) and the
 * stack's header test (tests/stack/hosting-headers.test.ts) make theirs in Node, so what they send is what
 * the page sends.
 */
import { COLLECTIONS, HEALTH_DOCUMENT, type NewSignup } from '@goody/contract';
import { type FirebaseApp, initializeApp } from 'firebase/app';
import {
  addDoc,
  collection,
  connectFirestoreEmulator,
  doc,
  type Firestore,
  getDoc,
  getFirestore,
  serverTimestamp,
} from 'firebase/firestore/lite';
import { connectFunctionsEmulator, type Functions, getFunctions } from 'firebase/functions';
import type { FirebaseSettings } from './settings.ts';

/** The Firebase app of `settings`; `name` tells several apart in one process (the page has one). */
export function firebaseApp(settings: FirebaseSettings, name?: string): FirebaseApp {
  const options = { projectId: settings.projectId, apiKey: settings.apiKey, appId: settings.appId };
  return name === undefined ? initializeApp(options) : initializeApp(options, name);
}

/** Firestore Lite and Functions of `app`, wired to the emulators when `settings` name them. */
export function firebaseServices(
  app: FirebaseApp,
  settings: FirebaseSettings,
): { firestore: Firestore; functions: Functions } {
  const firestore = getFirestore(app);
  const functions = getFunctions(app, settings.functionsRegion);
  if (settings.emulators) {
    connectFirestoreEmulator(firestore, settings.emulators.firestore.host, settings.emulators.firestore.port);
    connectFunctionsEmulator(functions, settings.emulators.functions.host, settings.emulators.functions.port);
  }
  return { firestore, functions };
}

/** The connection test's read: one public document. It never reads `email_subscriptions`. */
export function readHealthDocument(firestore: Firestore) {
  return getDoc(doc(firestore, HEALTH_DOCUMENT.collection, HEALTH_DOCUMENT.id));
}

/** Appends one sign-up with exactly the four fields the security rules accept. */
export function addSignup(firestore: Firestore, subscription: NewSignup) {
  // Fields are picked one by one so nothing else a caller's object carries can reach the database.
  return addDoc(collection(firestore, COLLECTIONS.signups), {
    email: subscription.email,
    subscription_type: subscription.subscription_type,
    source: subscription.source,
    created_at: serverTimestamp(),
  });
}

import { setGlobalOptions } from 'firebase-functions/v2/options';

// Imported first by every callable module: firebase-functions reads the global options when onCall()
// builds a function's endpoint, so they must be set before any callable is defined.
//
// maxInstances caps what a burst of sign-ups (or abuse of these public endpoints) can cost and how
// hard it can hit MailerLite's 120 requests a minute; one instance serves up to 80 calls at once.
setGlobalOptions({ region: 'us-central1', maxInstances: 10, memory: '256MiB' });

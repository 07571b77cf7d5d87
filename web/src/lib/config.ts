/**
 * The page's configuration: the Firebase settings (settings.ts, read from Vite env once and validated) and the
 * callables it calls on its own origin, named by the contract (contract/src/index.ts, CALLABLES).
 */
import { CALLABLES, type CallableName } from '@goody/contract';

export {
  backendOrigins,
  type FirebaseEnv,
  type FirebaseSettings,
  type HostPort,
  parseHostPort,
  readFirebaseSettings,
} from './settings.ts';

/**
 * The callables the page calls on its own origin, and where: a Hosting rewrite (firebase.json, before the app
 * shell's catch-all) sends `/api/<name>` to the function of that name, in the Hosting emulator as in a deploy.
 * A same-origin call needs no CORS preflight (its `Content-Type: application/json` and App Check header would
 * otherwise cost one per call) and no second HTTPS origin on a phone: it rides the connection the page was
 * loaded on. The admin's sync is not among them: it runs for up to 540 s, and Hosting ends a rewritten request
 * at 60 s, so it keeps calling its function's own host.
 */
export const SITE_CALLABLES = [
  CALLABLES.addContact,
  CALLABLES.sendThankYou,
] as const satisfies readonly CallableName[];

/** The path on the site's own origin where Hosting serves the callable `name` (firebase.json's rewrites). */
export function callablePath(name: CallableName): string {
  return `/api/${name}`;
}

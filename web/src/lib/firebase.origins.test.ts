// @vitest-environment node
/**
 * The origins the landing page preconnects to (config.ts, backendOrigins) are the ones the real Firebase
 * SDKs call for a real project besides the page's own: a whole sign-up (connection test, insert, both
 * callables) with `fetch` answered in-process, nothing sent anywhere, and every URL it was asked for recorded.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signUpThrough } from '@/test/wholeSignup';
import type { Backend } from './backend';
import { backendOrigins } from './config';

/** The page's own origin, where Hosting serves the site and rewrites the sign-up callables to their functions. */
const SITE = 'https://goody.example';
const fetched: string[] = [];
let backend: Backend;

function answer(url: string): Response {
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  if (url.includes(':batchGet')) {
    const name = 'projects/goody-prod/databases/(default)/documents/public/health';
    return json([{ missing: name, readTime: '2024-05-01T10:00:00.000000Z' }]);
  }
  if (url.includes(':commit')) return json({ commitTime: '2024-05-01T10:00:00.000000Z', writeResults: [{}] });
  return json({ result: { accepted: true } });
}

beforeAll(async () => {
  vi.stubEnv('VITE_FIREBASE_PROJECT_ID', 'goody-prod');
  vi.stubEnv('VITE_FIREBASE_API_KEY', 'public-web-key');
  vi.stubEnv('VITE_FIREBASE_APP_ID', '1:42:web:abc');
  vi.stubEnv('VITE_FUNCTIONS_REGION', 'europe-west1');
  vi.stubEnv('VITE_USE_EMULATORS', 'false');
  vi.stubGlobal('location', new URL(`${SITE}/`));
  vi.stubGlobal('fetch', async (input: RequestInfo | URL) => {
    const url = input instanceof Request ? input.url : String(input);
    fetched.push(url);
    return answer(url);
  });
  backend = await import('./firebase');
});

afterAll(() => {
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
});

describe('the origins a sign-up calls on a real project', () => {
  it("are exactly backendOrigins (Firestore) and the page's own origin (both callables, no functions host)", async () => {
    expect(backend.settings.emulators).toBeNull();
    await signUpThrough(backend);
    expect(fetched.length).toBeGreaterThanOrEqual(4);
    expect([...new Set(fetched.map((url) => new URL(url).origin))].sort()).toEqual(
      [...backendOrigins(backend.settings), SITE].sort(),
    );
    expect(fetched.filter((url) => url.startsWith(SITE))).toEqual([
      `${SITE}/api/add-contact-to-mailerlite`,
      `${SITE}/api/send-thank-you-email`,
    ]);
  });
});

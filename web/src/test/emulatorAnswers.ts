import { CALLABLES } from '@goody/contract';

/**
 * What the emulators answer the Firebase SDKs, by route (the last segment of the request's path, after a
 * `:`): Firestore Lite's read (`batchGet`: every document missing) and write (`commit`), and a callable (its
 * name: `{result: null}`, the sync a success). One table for both network doubles: the fake `fetch`
 * (./fakeNetwork.ts) and the loopback server of the App Check tests (./appCheckWire.ts).
 */
export function emulatorAnswer(route: string, body: unknown): unknown {
  if (route === 'batchGet') {
    const names = (body as { documents: string[] }).documents;
    return names.map((name) => ({ missing: name, readTime: '2024-05-01T10:00:00.000000Z' }));
  }
  if (route === 'commit') return { commitTime: '2024-05-01T10:00:00.000000Z', writeResults: [{}] };
  if (route === CALLABLES.syncEmails) return { result: { success: true, synced: 3 } };
  return { result: null };
}

/** The route of a request path, as emulatorAnswer names it. */
export function routeOf(path: string): string {
  return (
    decodeURIComponent(path.split('?')[0] ?? '')
      .split('/')
      .pop()
      ?.split(':')
      .pop() ?? ''
  );
}

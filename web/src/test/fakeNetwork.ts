import { emulatorAnswer, routeOf } from './emulatorAnswers';

/**
 * A stand-in for `fetch` that answers the Firebase SDKs as the emulators do (./emulatorAnswers.ts), so tests can run the real
 * SDKs (Firestore Lite, Functions) and the project's boundary with no server, under fake timers.
 * A route can be made to hang: its request stays open, unanswered, until the test releases it.
 */
export type Route = 'batchGet' | 'commit' | (string & {});

interface Held {
  route: Route;
  release: () => void;
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

export function fakeNetwork() {
  /** The route of every request made, in order. */
  const requests: Route[] = [];
  const hanging = new Set<Route>();
  const held: Held[] = [];

  async function fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const route = routeOf(url.pathname);
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    requests.push(route);
    if (hanging.has(route)) {
      await new Promise<void>((release) => held.push({ route, release }));
    }
    return json(200, emulatorAnswer(route, body));
  }

  return {
    fetch,
    requests,
    /** Requests on this route stay unanswered until `releaseAll`. */
    hang(route: Route) {
      hanging.add(route);
    },
    /** Answers every held request (late) and stops hanging. */
    releaseAll() {
      hanging.clear();
      for (const request of held.splice(0)) request.release();
    },
    reset() {
      this.releaseAll();
      requests.length = 0;
    },
  };
}

/**
 * Lets pending work run (the SDKs await several steps before they fetch; the first call also loads the
 * Firebase module) without moving the fake clock: setImmediate and Date stay real where this is used.
 */
export async function until(condition: () => boolean, what: string, withinMs = 10_000): Promise<void> {
  const giveUpAt = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Lets already-started work (a late answer, its handlers) run to its end, without moving the fake clock. */
export async function letWorkRun(turns = 20): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await new Promise((resolve) => setImmediate(resolve));
}

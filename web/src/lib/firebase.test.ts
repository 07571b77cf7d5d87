// @vitest-environment node
/**
 * Drives the real Firebase SDKs (Firestore Lite and Functions) against a recording HTTP server on
 * loopback that answers like the emulators and like the site itself (the page's origin, where Hosting
 * rewrites /api/<name> to the sign-up callables), and checks what actually goes over the wire: which
 * document the connection test reads, the exact fields of the insert, the callables' paths and bodies.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { signUpThrough } from '@/test/wholeSignup';
import type { Backend } from './backend';

interface Recorded {
  method: string;
  path: string;
  body: unknown;
}

/** `drop` closes the connection without an answer, as a network failure does. */
type Reply = { status: number; body: unknown } | 'drop';

const PROJECT = 'demo-goody';
const DOCUMENTS = `projects/${PROJECT}/databases/(default)/documents`;

let server: Server;
let requests: Recorded[] = [];
/** The X-Firebase-AppCheck header of each recorded request. */
let appCheckHeaders: (string | string[] | undefined)[] = [];
/** Every URL the SDKs fetched, whatever its host. */
const fetched: string[] = [];
let replies: Record<string, Reply[]> = {};

function queue(route: string, answer: Reply) {
  replies[route] = [...(replies[route] ?? []), answer];
}

function reply(route: string, status: number, body: unknown) {
  queue(route, { status, body });
}

function drop(route: string) {
  queue(route, 'drop');
}

function defaultReply(path: string, body: unknown): Reply {
  if (path.endsWith(':batchGet')) {
    const names = (body as { documents: string[] }).documents;
    return {
      status: 200,
      body: names.map((name) => ({ missing: name, readTime: '2024-05-01T10:00:00.000000Z' })),
    };
  }
  if (path.endsWith(':commit')) {
    return { status: 200, body: { commitTime: '2024-05-01T10:00:00.000000Z', writeResults: [{}] } };
  }
  return { status: 200, body: { result: null } };
}

async function handle(request: IncomingMessage, response: ServerResponse) {
  let raw = '';
  for await (const chunk of request) raw += chunk;
  const path = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname);
  // Browsers (and the SDK) may send a CORS preflight; answer it without recording.
  response.setHeader('access-control-allow-origin', '*');
  response.setHeader('access-control-allow-headers', '*');
  if (request.method === 'OPTIONS') {
    response.writeHead(204).end();
    return;
  }
  const body = raw ? JSON.parse(raw) : undefined;
  requests.push({ method: request.method ?? '', path, body });
  appCheckHeaders.push(request.headers['x-firebase-appcheck']);
  const route = path.split('/').pop()?.split(':').pop() ?? '';
  const answer = replies[route]?.shift() ?? defaultReply(path, body);
  if (answer === 'drop') {
    request.socket.destroy();
    return;
  }
  response.writeHead(answer.status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(answer.body));
}

let backend: Backend;

beforeAll(async () => {
  server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  vi.stubEnv('VITE_FIREBASE_PROJECT_ID', PROJECT);
  vi.stubEnv('VITE_FIRESTORE_EMULATOR_HOST', `127.0.0.1:${port}`);
  vi.stubEnv('VITE_FUNCTIONS_EMULATOR_HOST', `127.0.0.1:${port}`);
  // The page's own origin: the same server, as the Hosting emulator shares none with the Functions emulator.
  vi.stubGlobal('location', new URL(`http://127.0.0.1:${port}/`));
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) => {
    fetched.push(input instanceof Request ? input.url : String(input));
    return realFetch(input, init);
  });
  backend = await import('./firebase');
});

afterAll(async () => {
  vi.unstubAllGlobals();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
  appCheckHeaders = [];
  replies = {};
});

describe('the Firebase boundary (real SDKs, recorded wire traffic)', () => {
  it('wires both emulators when the project is a demo- project', () => {
    expect(backend.settings.projectId).toBe(PROJECT);
    expect(backend.settings.emulators).not.toBeNull();
  });

  it('uses no App Check without a site key: no token on any request, nothing fetched from anywhere else', async () => {
    expect(backend.settings.appCheck).toBeNull();
    await signUpThrough(backend);
    expect(appCheckHeaders).toEqual([undefined, undefined, undefined, undefined]);
    const { port } = server.address() as AddressInfo;
    expect(fetched.length).toBeGreaterThanOrEqual(4);
    expect(fetched.filter((url) => !url.startsWith(`http://127.0.0.1:${port}/`))).toEqual([]);
  });

  it('connectionTest reads exactly one document, public/health, and never email_subscriptions', async () => {
    await expect(backend.connectionTest()).resolves.toBeUndefined();
    expect(requests).toEqual([
      {
        method: 'POST',
        path: `/v1/${DOCUMENTS}:batchGet`,
        body: { documents: [`${DOCUMENTS}/public/health`] },
      },
    ]);
    expect(JSON.stringify(requests)).not.toContain('email_subscriptions');
  });

  it('connectionTest fails when the database refuses to answer', async () => {
    reply('batchGet', 503, {
      error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' },
    });
    await expect(backend.connectionTest()).rejects.toMatchObject({ code: 'unavailable' });
  });

  it("warmConnectionTest sends the connection test's own request (so the press finds its preflight asked), and swallows a failure", async () => {
    await expect(backend.warmConnectionTest()).resolves.toBeUndefined();
    reply('batchGet', 503, {
      error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' },
    });
    await expect(backend.warmConnectionTest()).resolves.toBeUndefined();
    await backend.connectionTest();
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((request) => JSON.stringify(request))).size).toBe(1);
  });

  it('insertSubscription writes exactly email, subscription_type, source and a server-set created_at', async () => {
    const { id } = await backend.insertSubscription({
      email: 'teen@example.com',
      subscription_type: 'club',
      source: 'final_cta',
      // An extra field a caller might carry along must not reach the database.
      ...({ note: 'must not be sent' } as object),
    });

    expect(requests).toHaveLength(1);
    const [commit] = requests;
    expect(commit?.path).toBe(`/v1/${DOCUMENTS}:commit`);
    expect(commit?.body).toEqual({
      writes: [
        {
          update: {
            name: `${DOCUMENTS}/email_subscriptions/${id}`,
            fields: {
              email: { stringValue: 'teen@example.com' },
              subscription_type: { stringValue: 'club' },
              source: { stringValue: 'final_cta' },
            },
          },
          updateTransforms: [{ fieldPath: 'created_at', setToServerValue: 'REQUEST_TIME' }],
          // addDoc creates: it never overwrites an existing document.
          currentDocument: { exists: false },
        },
      ],
    });
    expect(id).toMatch(/^[A-Za-z0-9]{20}$/);
  });

  it("insertSubscription rejects with the database's own message", async () => {
    reply('commit', 403, {
      error: { code: 403, message: 'Missing or insufficient permissions.', status: 'PERMISSION_DENIED' },
    });
    await expect(
      backend.insertSubscription({
        email: 'teen@example.com',
        subscription_type: 'updates',
        source: 'hero_form',
      }),
    ).rejects.toMatchObject({ code: 'permission-denied', message: 'Missing or insufficient permissions.' });
  });

  it('insertSubscription rejects with an empty message when the request gets no answer at all', async () => {
    drop('commit');
    const failure = await backend
      .insertSubscription({ email: 'teen@example.com', subscription_type: 'updates', source: 'hero_form' })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('');
  });

  it("calls add-contact-to-mailerlite on the page's own origin, with the body it is given (hero and final shapes)", async () => {
    reply('add-contact-to-mailerlite', 200, { result: { ok: true } });
    await expect(
      backend.addContactToMailerlite({ email: 'a@example.com', source: 'hero_form' }),
    ).resolves.toEqual({
      ok: true,
    });
    await backend.addContactToMailerlite({
      email: 'b@example.com',
      source: 'final_cta',
      subscription_type: 'club',
    });
    expect(requests).toEqual([
      {
        method: 'POST',
        path: '/api/add-contact-to-mailerlite',
        body: { data: { email: 'a@example.com', source: 'hero_form' } },
      },
      {
        method: 'POST',
        path: '/api/add-contact-to-mailerlite',
        body: { data: { email: 'b@example.com', source: 'final_cta', subscription_type: 'club' } },
      },
    ]);
  });

  it("calls send-thank-you-email on the page's own origin with {email}", async () => {
    await backend.sendThankYouEmail({ email: 'teen@example.com' });
    expect(requests).toEqual([
      {
        method: 'POST',
        path: '/api/send-thank-you-email',
        body: { data: { email: 'teen@example.com' } },
      },
    ]);
  });

  it("calls sync-emails-to-mailerlite on its function's host (the emulator here) with an empty body and returns its reply", async () => {
    reply('sync-emails-to-mailerlite', 200, { result: { success: true, synced: 7, message: 'Done' } });
    await expect(backend.syncEmailsToMailerlite()).resolves.toEqual({
      success: true,
      synced: 7,
      message: 'Done',
    });
    expect(requests).toEqual([
      { method: 'POST', path: `/${PROJECT}/us-central1/sync-emails-to-mailerlite`, body: { data: {} } },
    ]);
  });

  it('a callable that gets no answer rejects with an empty message, not the bare code', async () => {
    drop('sync-emails-to-mailerlite');
    await expect(backend.syncEmailsToMailerlite()).rejects.toMatchObject({
      code: 'functions/internal',
      message: '',
    });
    reply('send-thank-you-email', 500, { error: { status: 'INTERNAL', message: 'INTERNAL' } });
    await expect(backend.sendThankYouEmail({ email: 'teen@example.com' })).rejects.toMatchObject({
      code: 'functions/internal',
      message: '',
    });
  });

  it('a callable that fails rejects with the error the function threw', async () => {
    reply('sync-emails-to-mailerlite', 400, {
      error: { status: 'INVALID_ARGUMENT', message: 'Nothing to sync with.' },
    });
    await expect(backend.syncEmailsToMailerlite()).rejects.toMatchObject({
      code: 'functions/invalid-argument',
      message: 'Nothing to sync with.',
    });
  });
});

/**
 * For the tests that start the real Firebase SDKs with App Check (one test file per scenario: the App
 * Check SDK keeps its state per page, as it would in a browser). A recording HTTP server on loopback
 * answers like the emulators and like App Check's token exchange, to which `fetch` is rerouted, and a
 * stand-in for reCAPTCHA Enterprise's `grecaptcha.enterprise` attests without a network.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { vi } from 'vitest';
import { emulatorAnswer, routeOf } from './emulatorAnswers';

export const PROJECT = 'goody-prod';
export const API_KEY = 'public-web-key';
export const APP_ID = '1:123456789012:web:0123456789abcdef';
export const SITE_KEY = '6LdAbCdEfGhIjKlMnOpQrStUvWxYz-0123456_89';
export const DOCUMENTS = `projects/${PROJECT}/databases/(default)/documents`;

/** The App Check token the exchange answers with; Firestore and the callables must carry it. */
export const APP_CHECK_TOKEN = 'app-check-token-from-exchange';
/** What the reCAPTCHA stand-in answers to execute(). */
export const RECAPTCHA_ATTESTATION = 'recaptcha-enterprise-attestation';

const APP_CHECK_ENDPOINT = 'https://content-firebaseappcheck.googleapis.com/';
const REROUTED_PREFIX = '/app-check/';

export interface Recorded {
  method: string;
  /** Path and query; App Check's exchange keeps its own path, under /app-check/. */
  path: string;
  appCheckHeader: string | undefined;
  body: unknown;
}

export interface RecaptchaStandIn {
  rendered: Array<{ container: string; sitekey: string; size: string }>;
  executed: Array<{ widgetId: number; action: string }>;
}

export interface Wire {
  requests: Recorded[];
  recaptcha: RecaptchaStandIn;
  /** Settles once the first token exchange has been answered. */
  firstExchange: Promise<void>;
  stop(): Promise<void>;
}

/** App Check's exchange answers a token; the rest as the emulators do (./emulatorAnswers.ts). */
function reply(path: string, body: unknown): unknown {
  if (path.startsWith(REROUTED_PREFIX)) return { token: APP_CHECK_TOKEN, ttl: '3600s' };
  return emulatorAnswer(routeOf(path), body);
}

/** grecaptcha.enterprise as App Check drives it: ready, render an invisible widget, execute it. */
function installRecaptchaStandIn(): RecaptchaStandIn {
  const recaptcha: RecaptchaStandIn = { rendered: [], executed: [] };
  const callbacks: Array<() => void> = [];
  const enterprise = {
    ready: (callback: () => void) => callback(),
    render: (container: string, params: { sitekey: string; size: string; callback: () => void }) => {
      recaptcha.rendered.push({ container, sitekey: params.sitekey, size: params.size });
      callbacks.push(params.callback);
      return callbacks.length - 1;
    },
    execute: async (widgetId: number, options: { action: string }) => {
      recaptcha.executed.push({ widgetId, action: options.action });
      callbacks[widgetId]?.();
      return RECAPTCHA_ATTESTATION;
    },
  };
  vi.stubGlobal('grecaptcha', { enterprise });
  return recaptcha;
}

/**
 * Starts the server, reroutes App Check's exchange to it, installs the reCAPTCHA stand-in and points
 * the web app's settings at all of it (App Check on). Import `./firebase` afterwards.
 */
export async function startWire(): Promise<Wire> {
  const requests: Recorded[] = [];
  let exchanged: () => void = () => {};
  const firstExchange = new Promise<void>((resolve) => {
    exchanged = resolve;
  });
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    let raw = '';
    for await (const chunk of request) raw += chunk;
    response.setHeader('access-control-allow-origin', '*');
    response.setHeader('access-control-allow-headers', '*');
    if (request.method === 'OPTIONS') {
      response.writeHead(204).end();
      return;
    }
    const path = decodeURIComponent(request.url ?? '/');
    const body = raw ? JSON.parse(raw) : undefined;
    const header = request.headers['x-firebase-appcheck'];
    requests.push({
      method: request.method ?? '',
      path,
      appCheckHeader: Array.isArray(header) ? header.join(',') : header,
      body,
    });
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(reply(path, body)), () => {
      if (path.startsWith(REROUTED_PREFIX)) exchanged();
    });
  };
  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => response.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // The page's own origin (jsdom's), where the sign-up callables are called: the server answers for it too.
  const site = `${globalThis.location.origin}/`;
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.startsWith(site)) return realFetch(`${origin}/${url.slice(site.length)}`, init);
    if (!url.startsWith(APP_CHECK_ENDPOINT)) return realFetch(input, init);
    return realFetch(`${origin}${REROUTED_PREFIX}${url.slice(APP_CHECK_ENDPOINT.length)}`, init);
  });
  const recaptcha = installRecaptchaStandIn();

  vi.stubEnv('VITE_FIREBASE_PROJECT_ID', PROJECT);
  vi.stubEnv('VITE_FIREBASE_API_KEY', API_KEY);
  vi.stubEnv('VITE_FIREBASE_APP_ID', APP_ID);
  vi.stubEnv('VITE_USE_EMULATORS', 'true');
  vi.stubEnv('VITE_FIRESTORE_EMULATOR_HOST', origin.slice('http://'.length));
  vi.stubEnv('VITE_FUNCTIONS_EMULATOR_HOST', origin.slice('http://'.length));
  vi.stubEnv('VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY', SITE_KEY);

  return {
    requests,
    recaptcha,
    firstExchange,
    stop: async () => {
      vi.unstubAllGlobals();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

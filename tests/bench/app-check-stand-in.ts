// App Check for bench:signup --app-check: the site built with a site key, each page on App Check's debug
// provider (the debug token set before its scripts run), and Google's two hosts the SDK then calls answered on
// loopback over real HTTPS: www.google.com (reCAPTCHA Enterprise's script, a stand-in of the part of
// `grecaptcha.enterprise` the SDK drives) and content-firebaseappcheck.googleapis.com (the token exchange).
// Chromium resolves both names to this server (--host-resolver-rules) and accepts its self-signed certificate,
// so each is a request of its own on the network, with its CORS preflight and its own TCP + TLS connection,
// recorded and priced like every other (request-path.ts), not answered inside the browser.
//
// What the debug provider leaves out: reCAPTCHA's attestation (its iframe and its requests to Google), which
// a phone with the real provider pays before its first exchange. Priced this way, App Check is a lower bound.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * The stack's settings for App Check on the emulators: the web build's site key (a demo project takes one
 * there), and the callables refusing a call without a token (the launcher's GOODY_ENFORCE_APP_CHECK), so a
 * sign-up whose calls went out without the token ends in an error toast and fails the bench.
 */
export const APP_CHECK_STACK_ENV: Record<string, string> = {
  VITE_APPCHECK_RECAPTCHA_ENTERPRISE_SITE_KEY: '6Lc-bench-debug-provider-site-key-0000000',
  VITE_FIREBASE_API_KEY: 'demo-api-key',
  VITE_FIREBASE_APP_ID: '1:000000000000:web:0000000000000000000000',
  GOODY_ENFORCE_APP_CHECK: 'true',
};

/** True for App Check's token exchange (content-firebaseappcheck.googleapis.com), its preflight too. */
export function isAppCheckExchange(url: string): boolean {
  return new URL(url).hostname === 'content-firebaseappcheck.googleapis.com';
}

const DEBUG_TOKEN = '0bench00-d3b6-4c0f-9a57-app0check0000';
const HOSTS = ['www.google.com', 'content-firebaseappcheck.googleapis.com'];

const RECAPTCHA_STAND_IN = `self.grecaptcha = { enterprise: {
  ready: (callback) => callback(),
  render: () => 0,
  execute: () => Promise.reject(new Error('the debug provider never attests with reCAPTCHA')),
} };`;

export interface AppCheckStandIn {
  /** Chromium switches: Google's two hosts to this server, its certificate accepted. */
  chromiumArgs: string[];
  /** Run in each page before its own scripts: App Check's debug provider on, with a fixed debug token. */
  initScript: string;
  /** Token exchanges answered so far. */
  exchanges(): number;
  close(): Promise<void>;
}

export async function startAppCheckStandIn(): Promise<AppCheckStandIn> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'goody-app-check-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2']
      .concat(['-subj', '/CN=content-firebaseappcheck.googleapis.com'])
      .concat(['-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')]),
    { stdio: 'ignore' },
  );
  let exchanges = 0;
  const server = https.createServer(
    { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) },
    (req, res) => {
      const cors = {
        'access-control-allow-origin': '*',
        'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*',
        'access-control-allow-methods': 'POST',
      };
      if (req.method === 'OPTIONS') {
        res.writeHead(204, cors).end();
      } else if (req.url?.startsWith('/recaptcha/')) {
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(RECAPTCHA_STAND_IN);
      } else if (req.method === 'POST' && /:exchange\w*Token/.test(req.url ?? '')) {
        exchanges += 1;
        req.resume();
        req.on('end', () =>
          res
            .writeHead(200, { ...cors, 'content-type': 'application/json' })
            .end(JSON.stringify({ token: `bench-app-check-token-${exchanges}`, ttl: '3600s' })),
        );
      } else {
        res.writeHead(404, cors).end();
      }
    },
  );
  // Idle connections stay as long as Google's front ends keep them: the browser decides when to drop one.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    chromiumArgs: [
      `--host-resolver-rules=${HOSTS.map((host) => `MAP ${host} 127.0.0.1:${port}`).join(',')}`,
      '--ignore-certificate-errors',
    ],
    initScript: `self.FIREBASE_APPCHECK_DEBUG_TOKEN = ${JSON.stringify(DEBUG_TOKEN)};`,
    exchanges: () => exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}

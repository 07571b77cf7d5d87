// Serves a site the way firebase-tools' Hosting emulator does (lib/serve/hosting.js): its engine,
// superstatic, given firebase.json's hosting section as it is, resolved against a project root. The tests
// that read headers and routes as served share it, so both judge the same thing Hosting's emulator runs.
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { server as superstaticServer } from 'superstatic';

export interface ServedSite {
  origin: string;
  close(): Promise<void>;
}

/** A request handler, as a rewriter hands superstatic one for a rewrite it resolved. */
export type Middleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => void;

/**
 * What answers a rewrite to a function: firebase-tools gives superstatic its functionsProxy (lib/hosting/
 * functionsProxy.js), which proxies to the Functions emulator; a test gives its own.
 */
export type FunctionRewriter = (rewrite: {
  function: { functionId: string; region?: string };
}) => Promise<Middleware>;

/**
 * Writes a fixture site with `writeSite(publicDir)` into a temporary project root and serves it on loopback;
 * rewrites to a function are answered by `functionRewriter` (without one, such a request fails).
 */
export async function serveLikeHostingEmulator(
  hosting: Record<string, unknown> & { public: string },
  writeSite: (publicDir: string) => void,
  functionRewriter?: FunctionRewriter,
): Promise<ServedSite> {
  const projectRoot = mkdtempSync(join(tmpdir(), 'goody-hosting-'));
  writeSite(join(projectRoot, hosting.public));
  const app = superstaticServer({
    port: 0,
    hostname: '127.0.0.1',
    cwd: projectRoot,
    config: structuredClone(hosting) as never,
    compression: true,
    stack: 'strict',
    debug: false,
    ...(functionRewriter ? { rewriters: { function: functionRewriter } } : {}),
  }) as unknown as { listen: (done: () => void) => Server };
  const server = await new Promise<Server>((resolve) => {
    const listening: Server = app.listen(() => resolve(listening));
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(projectRoot, { recursive: true, force: true });
    },
  };
}

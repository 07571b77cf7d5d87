// A static server that answers like Firebase Hosting: superstatic (the engine of firebase-tools' Hosting
// emulator) with firebase.json's hosting section as it is (rewrites, headers, clean URLs, compression),
// serving a directory of our choice on loopback.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { server as superstaticServer } from 'superstatic';
import { repoRoot } from '../paths.ts';

export interface HostedSite {
  origin: string;
  close(): Promise<void>;
}

export function hostingConfig(): Record<string, unknown> {
  const firebaseJson = JSON.parse(readFileSync(`${repoRoot}/firebase.json`, 'utf8')) as {
    hosting: Record<string, unknown>;
  };
  return firebaseJson.hosting;
}

/** Serves `dir` with `hosting` (a firebase.json hosting section; by default this repository's). */
export async function serveLikeHosting(
  dir: string,
  hosting: Record<string, unknown> = hostingConfig(),
): Promise<HostedSite> {
  const app = superstaticServer({
    port: 0,
    hostname: '127.0.0.1',
    cwd: dir,
    config: { ...hosting, public: '.' } as never,
    compression: true,
    stack: 'strict',
    debug: false,
  }) as unknown as { listen: (done: () => void) => Server };
  const server = await new Promise<Server>((resolve) => {
    const listening: Server = app.listen(() => resolve(listening));
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { resolvePorts } from './config.ts';
import { LauncherError } from './errors.ts';
import { assertPortsFree, describePortInUse, findDuplicateClaims, portClaims, probePort } from './ports.ts';

const servers: Server[] = [];

function listen(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    servers.push(server);
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (typeof address === 'object' && address) resolve(address.port);
    });
  });
}

async function freePort(): Promise<number> {
  const port = await listen();
  await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
  return port;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function rejection(promise: Promise<unknown>): Promise<LauncherError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(LauncherError);
  return error as LauncherError;
}

describe('the port check before anything starts', () => {
  it('names the port, what wanted it, who holds it and the variable that moves it', async () => {
    const taken = await listen();
    const ports = resolvePorts({
      GOODY_HOSTING_PORT: String(taken),
      GOODY_MAILERLITE_PORT: String(await freePort()),
    });
    const claims = portClaims(ports, '127.0.0.1', ['hosting', 'mailerlite']);

    const error = await rejection(assertPortsFree(claims));

    expect(error.exitCode).toBe(2);
    expect(error.message).toContain('Nothing was started.');
    expect(error.message).toContain(`Port ${taken} on 127.0.0.1 is already in use`);
    expect(error.message).toContain('the Hosting emulator (the site) needs it');
    expect(error.message).toContain('GOODY_HOSTING_PORT=<another port> npm start');
    // This test process holds the port, and Linux lets it see its own sockets.
    if (process.platform === 'linux') expect(error.message).toContain(`by pid ${process.pid}`);
    // Only the port that is taken is reported.
    expect(error.message).not.toContain('MailerLite');
  });

  it('reports every taken port at once', async () => {
    const first = await listen();
    const second = await listen();
    const ports = resolvePorts({ GOODY_SMTP_PORT: String(first), GOODY_SMTP_API_PORT: String(second) });

    const error = await rejection(assertPortsFree(portClaims(ports, '127.0.0.1', ['smtp', 'smtpApi'])));

    expect(error.message).toContain(`Port ${first} on 127.0.0.1 is already in use`);
    expect(error.message).toContain('the SMTP outbox (SMTP) needs it');
    expect(error.message).toContain(`Port ${second} on 127.0.0.1 is already in use`);
    expect(error.message).toContain('the SMTP outbox (HTTP control) needs it');
  });

  it('passes when every port is free', async () => {
    const ports = resolvePorts({
      GOODY_HUB_PORT: String(await freePort()),
      GOODY_LOGGING_PORT: String(await freePort()),
    });
    await expect(
      assertPortsFree(portClaims(ports, '127.0.0.1', ['hub', 'logging'])),
    ).resolves.toBeUndefined();
  });

  it('refuses one port given to two services, naming both variables', async () => {
    const port = await freePort();
    const ports = resolvePorts({ GOODY_HOSTING_PORT: String(port), GOODY_FUNCTIONS_PORT: String(port) });
    const claims = portClaims(ports, '127.0.0.1', ['hosting', 'functions']);

    expect(findDuplicateClaims(claims)).toEqual([
      `Port ${port} is given to both the Hosting emulator (the site) (GOODY_HOSTING_PORT) and the Functions ` +
        'emulator (the callables) (GOODY_FUNCTIONS_PORT); each needs a port of its own.',
    ]);
    const error = await rejection(assertPortsFree(claims));
    expect(error.message).toContain('each needs a port of its own');
  });

  it('points at an earlier npm start when that is what holds the port', () => {
    const [claim] = portClaims(resolvePorts({}), '127.0.0.1', ['functions']);
    if (!claim) throw new Error('no claim');
    const message = describePortInUse(claim, {
      pid: 4242,
      command:
        'node /repo/node_modules/firebase-tools/lib/bin/firebase.js emulators:start --only functions,hosting',
    });
    expect(message).toContain('Port 5001 on 127.0.0.1 is already in use by pid 4242');
    expect(message).toContain('an earlier `npm start` (or emulator) still running');
  });

  it('tells a taken port from a free one', async () => {
    const taken = await listen();
    expect(await probePort('127.0.0.1', taken)).toBe('EADDRINUSE');
    expect(await probePort('127.0.0.1', await freePort())).toBeUndefined();
  });
});

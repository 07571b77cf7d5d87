// The Firebase Firestore emulator as one Java process on a free loopback port, for test suites that need a
// database but not the rest of the stack (the functions' tests, the rules suite). `npm start` runs the same
// emulator through firebase-tools instead, beside Functions, Hosting, Pub/Sub and Cloud Tasks.
//
// Each suite gets its own data by using its own project id: the emulator keeps one database per project.

import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { emulatorEnv, findGoogleEmulators } from '../../dev/emulators/find.ts';

export interface RunningFirestoreEmulator {
  host: string;
  port: number;
  /** host:port, what FIRESTORE_EMULATOR_HOST takes. */
  hostPort: string;
  stop(): Promise<void>;
}

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** Starts the emulator and resolves once it answers; the message of a failed start carries its last output. */
export async function startFirestoreEmulator(
  options: { host?: string; port?: number; startTimeoutMs?: number } = {},
): Promise<RunningFirestoreEmulator> {
  const found = findGoogleEmulators(undefined, ['firestore']);
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  const child = spawn(
    path.join(found.java.home, 'bin', 'java'),
    ['-Duser.language=en', '-jar', found.firestore, '--host', host, '--port', String(port)],
    { env: emulatorEnv(found), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`The Firestore emulator exited while starting:\n${output}`);
    }
    try {
      const response = await fetch(`http://${host}:${port}/`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopProcess(child, exited);
      throw new Error(`The Firestore emulator did not answer on ${host}:${port} in time:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { host, port, hostPort: `${host}:${port}`, stop: () => stopProcess(child, exited) };
}

async function stopProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Deletes every document of a project's default database (the emulator's own reset endpoint). */
export async function clearFirestoreEmulator(hostPort: string, projectId: string): Promise<void> {
  const response = await fetch(
    `http://${hostPort}/emulator/v1/projects/${projectId}/databases/(default)/documents`,
    { method: 'DELETE' },
  );
  if (!response.ok)
    throw new Error(`Clearing ${projectId} failed: ${response.status} ${await response.text()}`);
}

/** Loads security rules for one project (what firebase-tools and rules-unit-testing do). */
export async function setFirestoreRules(hostPort: string, projectId: string, rules: string): Promise<void> {
  const response = await fetch(`http://${hostPort}/emulator/v1/projects/${projectId}:securityRules`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: rules }] } }),
  });
  if (!response.ok)
    throw new Error(`Loading rules for ${projectId} failed: ${response.status} ${await response.text()}`);
}

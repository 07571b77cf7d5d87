// The Cloud Tasks harness of the functions' tests: an enqueue endpoint that keeps the tasks, and an `Enqueue`
// that keeps them in memory.

import { randomUUID } from 'node:crypto';
import type { DocumentReference, Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../src/clock';
import { indexSignup } from '../src/delivery/index-signup';
import { enqueuePart } from '../src/delivery/part-life';
import type { Enqueue } from '../src/delivery/queue';
import type { Logger } from '../src/logs';
import { MAILBOX_SECRET } from './signups';

export interface EnqueuedTask {
  queue: string;
  payload: unknown;
  id: string;
  notBefore?: number;
}

/** Cloud Tasks as the code under test sees it through `Enqueue`: a task id seen before is a duplicate, enqueued once. */
export function recordingEnqueue(): { tasks: EnqueuedTask[]; enqueue: Enqueue } {
  const tasks: EnqueuedTask[] = [];
  const enqueue: Enqueue = async (queue, payload, { id, notBefore }) => {
    if (tasks.some((task) => task.id === id)) return 'duplicate';
    tasks.push({ queue, payload, id, ...(notBefore === undefined ? {} : { notBefore }) });
    return 'enqueued';
  };
  return { tasks, enqueue };
}

/**
 * The deps the Sync and the reconciler share: parts enqueued through `enqueue` under the tests' mailbox secret,
 * and the trigger's work (indexSignup) for a row it never reached.
 */
export function handOverDeps(db: Firestore, enqueue: Enqueue, clock: Clock, logger: Logger) {
  const part = enqueuePart(enqueue, MAILBOX_SECRET);
  return {
    db,
    clock,
    logger,
    enqueuePart: part,
    index: (ref: DocumentReference) =>
      indexSignup(ref, { mailboxSecret: MAILBOX_SECRET, enqueuePart: part, clock, logger }),
  };
}

export interface RecordedTask {
  queue: string;
  /** The task's name (its id last). */
  name: string;
  payload: unknown;
}

export interface TasksRecorder {
  hostPort: string;
  tasks: RecordedTask[];
  /** Forgets every task and every name seen (a queue purged). */
  clear(): void;
  stop(): Promise<void>;
}

/**
 * The enqueue endpoint of the Cloud Tasks emulator (what firebase-admin calls when CLOUD_TASKS_EMULATOR_HOST
 * is set), on loopback, keeping the tasks instead of dispatching them: a test then runs each through its
 * worker itself. A task name seen before answers 409, as Cloud Tasks does.
 */
export async function startTasksRecorder(): Promise<TasksRecorder> {
  const { createServer } = await import('node:http');
  const tasks: RecordedTask[] = [];
  const names = new Set<string>();
  const server = createServer((request, response) => {
    const match = /^\/projects\/[^/]+\/locations\/[^/]+\/queues\/([^/]+)\/tasks$/.exec(request.url ?? '');
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || !match) {
        response.writeHead(404).end();
        return;
      }
      const { task } = JSON.parse(Buffer.concat(chunks).toString()) as {
        task: { name?: string; httpRequest: { body: string } };
      };
      const name = task.name ?? `${match[1]}/${randomUUID()}`;
      if (names.has(name)) {
        response
          .writeHead(409, { 'content-type': 'text/plain' })
          .end('A task with the same name already exists');
        return;
      }
      names.add(name);
      const payload = JSON.parse(Buffer.from(task.httpRequest.body, 'base64').toString()) as {
        data: unknown;
      };
      tasks.push({ queue: match[1] as string, name, payload: payload.data });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ task }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    hostPort: `127.0.0.1:${port}`,
    tasks,
    clear: () => {
      tasks.length = 0;
      names.clear();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// The set-up a functions test file shares with the others, written once. `testBed(options)`, called at a file's
// top level (or in a describe, for that block alone), registers the hooks itself: beforeAll starts the stand-ins
// asked for, afterAll stops them and the Firestore harness, and beforeEach empties them all (the harness's
// project; MailerLite's account, limits and the group cache; the SMTP outbox's mails and faults; the recorded
// tasks) and hands out a fresh recording logger, so nothing one test leaves is seen by the next.
// `firestore` and `db` are there at once (startFirestore does nothing asynchronous), so a file may keep
// `const { db } = bed`; the stand-ins and the logger exist only inside hooks and tests: read them there, as
// `bed.ml`, `bed.outbox`, `bed.tasks`, `bed.logger`. Options: `mailerLite` (the MailerLite stand-in),
// `outbox` (the SMTP outbox), `deployed` (both, Cloud Tasks' enqueue endpoint recorded, and the deployed
// functions' params pointed at them with CLOUD_TASKS_EMULATOR_HOST: for the tests that run the onCall wrappers).

import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { MailerLiteStandIn } from '../../stand-ins/mailerlite/index.ts';
import type { SmtpOutbox } from '../../stand-ins/smtp/index.ts';
import { clearGroupCache } from '../src/mailerlite/groups';
import { type FirestoreHarness, startFirestore } from './firestore';
import { setLauncherParams } from './launcher-params';
import { type RecordingLogger, recordingLogger } from './logs';
import { resetMailerLite, startMailerLite } from './mailerlite';
import { startOutbox } from './smtp';
import { startTasksRecorder, type TasksRecorder } from './tasks';

export interface BedOptions {
  mailerLite?: boolean;
  outbox?: boolean;
  deployed?: boolean;
}

export interface Bed {
  firestore: FirestoreHarness;
  db: FirestoreHarness['db'];
  readonly ml: MailerLiteStandIn;
  readonly outbox: SmtpOutbox;
  readonly tasks: TasksRecorder;
  readonly logger: RecordingLogger;
}

export function testBed(options: BedOptions = {}): Bed {
  const firestore = startFirestore();
  let ml: MailerLiteStandIn | undefined;
  let outbox: SmtpOutbox | undefined;
  let tasks: TasksRecorder | undefined;
  let logger: RecordingLogger | undefined;
  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`testBed: no ${name} (not asked for, or read outside a test)`);
    return value;
  };

  beforeAll(async () => {
    const deployed = options.deployed === true;
    [ml, outbox, tasks] = await Promise.all([
      options.mailerLite || deployed ? startMailerLite() : undefined,
      options.outbox || deployed ? startOutbox() : undefined,
      deployed ? startTasksRecorder() : undefined,
    ]);
    if (deployed && ml && outbox && tasks) {
      setLauncherParams({ firestore, ml, outbox });
      process.env.CLOUD_TASKS_EMULATOR_HOST = tasks.hostPort;
    }
  });
  afterAll(async () => {
    if (tasks) delete process.env.CLOUD_TASKS_EMULATOR_HOST;
    await Promise.all([firestore.stop(), ml?.stop(), outbox?.stop(), tasks?.stop()]);
  });
  beforeEach(async () => {
    await firestore.reset();
    if (ml) {
      resetMailerLite(ml);
      // The stand-in's groups are gone, so group ids resolved by an earlier test are too.
      clearGroupCache();
    }
    if (outbox) {
      await outbox.faults.clear();
      await outbox.clear();
    }
    tasks?.clear();
    logger = recordingLogger();
  });

  return {
    firestore,
    db: firestore.db,
    get ml() {
      return started(ml, 'MailerLite stand-in');
    },
    get outbox() {
      return started(outbox, 'SMTP outbox');
    },
    get tasks() {
      return started(tasks, 'tasks recorder');
    },
    get logger() {
      return started(logger, 'logger');
    },
  };
}

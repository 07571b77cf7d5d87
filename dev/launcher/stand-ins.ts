// The offline stand-ins run inside the launcher's own process: they start in milliseconds, report the ports
// they bound, and cannot outlive the launcher (no orphan can hold their ports after a Ctrl-C). Their data lives
// in the data directory (GOODY_DATA_DIR), so a restart finds the sign-ups, the MailerLite account and the mail.

import { rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startFirestoreStandIn } from '../firestore/index.ts';
import { startMailerLiteStandIn } from '../mailerlite/index.ts';
import { startSmtpOutbox } from '../smtp/index.ts';
import type { LauncherConfig } from './config.ts';

export interface RunningStandIns {
  firestore?: { hostPort: string };
  mailerLite: { url: string; baseUrl: string };
  smtp: { url: string; apiUrl: string; dir: string };
}

export interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

/** Stops one stand-in, waiting at most `ms`; a failure or a hang is reported, never thrown. */
export async function stopWithin(item: Stoppable, ms: number, output: (line: string) => void): Promise<void> {
  const outcome = await Promise.race([
    item.stop().then(
      () => 'stopped' as const,
      (error: unknown) => error,
    ),
    delay(ms, 'timeout' as const),
  ]);
  if (outcome === 'timeout') output(`[launcher] ${item.name} did not stop within ${ms / 1000} s.`);
  else if (outcome !== 'stopped') output(`[launcher] ${item.name} failed to stop: ${String(outcome)}`);
}

/**
 * Starts the MailerLite stand-in, the SMTP outbox and (unless the Firebase Firestore emulator is used) the
 * Firestore stand-in, handing each to `started` as soon as it listens, so a stop or a failure midway still
 * stops those already running.
 */
export async function startStandIns(
  config: LauncherConfig,
  withFirestore: boolean,
  output: (line: string) => void,
  started: (item: Stoppable) => void,
): Promise<RunningStandIns> {
  const { host, ports } = config;
  const dataDir = (name: string) => path.join(config.dataDir, name);
  // --fresh: what the stand-ins kept is removed before they start, so they start empty.
  if (config.fresh) {
    await Promise.all(
      ['firestore', 'mailerlite', 'mail'].map((name) => rm(dataDir(name), { recursive: true, force: true })),
    );
  }
  const mailerLite = await startMailerLiteStandIn({
    host,
    port: ports.mailerlite,
    apiKey: config.mailerLiteApiKey,
    // The account's custom fields: the functions send each sign-up's source (hero_form / final_cta) in one,
    // which the operator creates in MailerLite (functions/README.md); values of unknown fields are dropped.
    customFields: ['source'],
    dataDir: dataDir('mailerlite'),
    log: output,
  });
  started({ name: 'the MailerLite stand-in', stop: () => mailerLite.stop() });

  const smtp = await startSmtpOutbox({
    host,
    port: ports.smtp,
    apiPort: ports.smtpApi,
    dir: dataDir('mail'),
    log: output,
  });
  started({ name: 'the SMTP outbox', stop: () => smtp.stop() });

  let firestore: { hostPort: string } | undefined;
  if (withFirestore) {
    const running = await startFirestoreStandIn({
      host,
      port: ports.firestore,
      projectId: config.projectId,
      dataDir: dataDir('firestore'),
    });
    firestore = running;
    started({ name: 'the Firestore stand-in', stop: () => running.stop() });
  }

  return {
    ...(firestore ? { firestore: { hostPort: firestore.hostPort } } : {}),
    mailerLite: { url: mailerLite.url, baseUrl: mailerLite.baseUrl },
    smtp: { url: smtp.url, apiUrl: `${smtp.apiUrl}/__control/state`, dir: smtp.dir },
  };
}

// The two stand-ins (MailerLite and the SMTP outbox: no emulator exists for either) run inside the launcher's own
// process, so no orphan can hold their ports after a Ctrl-C. Their data lives in the data directory
// (GOODY_DATA_DIR), so a restart finds the MailerLite account and the mail.

import { rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startMailerLiteStandIn } from '../../stand-ins/mailerlite/index.ts';
import { startSmtpOutbox } from '../../stand-ins/smtp/index.ts';
import type { LauncherConfig } from './config.ts';

export type RunningStandIns = Awaited<ReturnType<typeof startStandIns>>;

/** Where, inside the data directory, the Firestore emulator exports its documents on exit and imports them from. */
export const FIRESTORE_EXPORT_DIR = 'firestore-export';

export type Stoppable = { name: string; stop(): Promise<void> };

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
 * Starts the MailerLite stand-in and the SMTP outbox, handing each to `started` as soon as it listens, so a stop
 * or a failure midway still stops those already running.
 */
export async function startStandIns(
  config: LauncherConfig,
  output: (line: string) => void,
  started: (item: Stoppable) => void,
) {
  const { host, ports } = config;
  const dataDir = (name: string) => path.join(config.dataDir, name);
  // --fresh: what the stack kept is removed before anything starts, so it starts empty (the Firestore
  // emulator's export included: FIRESTORE_EXPORT_DIR).
  if (config.fresh) {
    await Promise.all(
      [FIRESTORE_EXPORT_DIR, 'mailerlite', 'mail'].map((name) =>
        rm(dataDir(name), { recursive: true, force: true }),
      ),
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

  return {
    mailerLite: { url: mailerLite.url, baseUrl: mailerLite.baseUrl },
    smtp: { url: smtp.url, apiUrl: `${smtp.apiUrl}/__control/state`, dir: smtp.dir },
  };
}

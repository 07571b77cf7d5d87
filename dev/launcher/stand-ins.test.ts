// The stand-ins as npm start runs them keep their data in the data directory across a restart, and --fresh
// starts them empty: judged over their own wire protocols (the MailerLite API, SMTP). The Firestore emulator's
// export and import across a restart are tested with the whole stack (tests/stack/start.test.ts).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveLauncherConfig } from './config.ts';
import {
  FIRESTORE_EXPORT_DIR,
  type RunningStandIns,
  type Stoppable,
  startStandIns,
  stopWithin,
} from './stand-ins.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'goody-stand-ins-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function start(argv: string[]): Promise<RunningStandIns & { stop(): Promise<void> }> {
  const config = resolveLauncherConfig(argv, { GOODY_DATA_DIR: dataDir });
  const anyPort = { mailerlite: 0, smtp: 0, smtpApi: 0 };
  const started: Stoppable[] = [];
  const running = await startStandIns(
    { ...config, ports: { ...config.ports, ...anyPort } },
    () => {},
    (item) => started.push(item),
  );
  return {
    ...running,
    stop: () => Promise.all(started.map((item) => stopWithin(item, 5_000, () => {}))).then(),
  };
}

const json = async <T>(url: string): Promise<T> => (await fetch(url)).json() as Promise<T>;

/** The MailerLite subscribers and mail subjects the stand-ins hold. */
async function held(standIns: RunningStandIns) {
  const mailerLite = await json<{ subscribers: { email: string }[] }>(
    `${standIns.mailerLite.url}/__control/state`,
  );
  const mail = await json<{ messages: { subject: string }[] }>(standIns.smtp.apiUrl);
  return {
    subscribers: mailerLite.subscribers.map((s) => s.email),
    mail: mail.messages.map((m) => m.subject),
  };
}

describe('the stand-ins npm start runs', () => {
  it('find their data again after a restart, and start empty with --fresh', async () => {
    const first = await start([]);
    await fetch(`${first.mailerLite.baseUrl}/subscribers`, {
      method: 'POST',
      headers: { authorization: 'Bearer dev-mailerlite-key', 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@b.c' }),
    });
    await nodemailer
      .createTransport(first.smtp.url)
      .sendMail({ from: 'hello@goody.example', to: 'a@b.c', subject: 'Thank you', text: 'Hi' });
    const before = await held(first);
    expect(before).toEqual({ subscribers: ['a@b.c'], mail: ['Thank you'] });
    await first.stop();

    const again = await start([]);
    expect(await held(again)).toEqual(before);
    await again.stop();

    // What the Firestore emulator exported when the stack last stopped goes too.
    const exported = path.join(dataDir, FIRESTORE_EXPORT_DIR, 'firebase-export-metadata.json');
    mkdirSync(path.dirname(exported), { recursive: true });
    writeFileSync(exported, '{}');
    const fresh = await start(['--fresh']);
    expect(await held(fresh)).toEqual({ subscribers: [], mail: [] });
    expect(existsSync(exported)).toBe(false);
    await fresh.stop();
  });
});

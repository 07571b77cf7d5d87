// The SMTP outbox driven by nodemailer, the client the thank-you mail uses.

import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OutboxMessage, type SmtpOutbox, startSmtpOutbox } from './index.ts';

let dir: string;
let outbox: SmtpOutbox;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'goody-outbox-test-'));
  outbox = await startSmtpOutbox({ port: 0, apiPort: 0, dir: join(dir, 'mail'), quiet: true });
});

afterEach(async () => {
  await outbox.stop();
  await rm(dir, { recursive: true, force: true });
});

function transport(auth?: { user: string; pass: string }) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: outbox.port,
    secure: false,
    ignoreTLS: true,
    auth,
  });
}

const thankYou = {
  from: 'GOODY <hello@goody.example>',
  to: 'kid@example.org',
  subject: 'Thank you for signing up',
  text: 'Thanks for joining the GOODY updates.',
  html: '<p>Thanks for joining the <b>GOODY</b> updates.</p>',
};

async function emlFiles(): Promise<string[]> {
  return (await readdir(outbox.dir)).filter((name) => name.endsWith('.eml'));
}

describe('delivery', () => {
  it('stores an accepted message as an .eml file with its headers and bodies', async () => {
    const info = await transport().sendMail({ ...thankYou, bcc: 'audit@goody.example' });
    expect(info.accepted).toEqual(['kid@example.org', 'audit@goody.example']);

    const files = await emlFiles();
    expect(files).toHaveLength(1);
    const raw = await readFile(join(outbox.dir, files[0] ?? ''), 'utf8');
    expect(raw).toMatch(/^Subject: Thank you for signing up\r?$/m);
    expect(raw).toMatch(/^From: GOODY <hello@goody\.example>\r?$/m);
    expect(raw).not.toMatch(/^Bcc:/m);

    const [message] = await outbox.messages();
    expect(message).toMatchObject({
      from: 'hello@goody.example',
      to: ['kid@example.org'],
      subject: 'Thank you for signing up',
      html: thankYou.html,
      envelope: { from: 'hello@goody.example', to: ['kid@example.org', 'audit@goody.example'] },
    });
    expect(message?.text.trim()).toBe(thankYou.text);
    expect(message?.file).toBe(join(outbox.dir, files[0] ?? ''));
    expect(message?.headers['message-id']).toBe(info.messageId);
    expect(message?.headers['content-type']).toMatch(/^multipart\/alternative/);
    expect(Number.isNaN(Date.parse(message?.date ?? ''))).toBe(false);
  });

  it('accepts any credentials when the client authenticates', async () => {
    await transport({ user: 'anyone', pass: 'anything' }).sendMail(thankYou);
    expect(await outbox.messages()).toHaveLength(1);
  });

  it('lists messages over HTTP (GET /__control/state), and deletes them (POST /__control/reset)', async () => {
    const mail = transport();
    await mail.sendMail(thankYou);
    await mail.sendMail({ ...thankYou, to: 'other@example.org', subject: 'Second' });

    const list = (await (await fetch(`${outbox.apiUrl}/__control/state`)).json()) as {
      total: number;
      messages: OutboxMessage[];
    };
    expect(list.total).toBe(2);
    expect(list.messages.map((m) => m.subject)).toEqual(['Thank you for signing up', 'Second']);
    expect(list.messages[1]?.to).toEqual(['other@example.org']);
    expect(await readFile(list.messages[1]?.file ?? '', 'utf8')).toMatch(/^Subject: Second\r?$/m);

    expect((await fetch(`${outbox.apiUrl}/__control/reset`, { method: 'POST' })).status).toBe(204);
    expect(await emlFiles()).toEqual([]);
    expect(await outbox.messages()).toEqual([]);
  });
});

describe('faults', () => {
  it('refuses the next message with the injected permanent code, stores nothing, then accepts again', async () => {
    outbox.faults.rejectNext(1, 554, '5.7.1 Relay access denied');
    const mail = transport();
    const error = await mail.sendMail(thankYou).then(
      () => undefined,
      (e: unknown) => e as Error & { responseCode?: number; response?: string },
    );
    expect(error?.responseCode).toBe(554);
    expect(error?.response).toContain('5.7.1 Relay access denied');
    expect(await emlFiles()).toEqual([]);

    await mail.sendMail(thankYou);
    expect(await outbox.messages()).toHaveLength(1);
  });

  it('takes temporary refusals over HTTP, and refuses a malformed fault with 400', async () => {
    const put = await fetch(`${outbox.apiUrl}/__control/faults`, {
      method: 'PUT',
      body: JSON.stringify({ rejectNext: { count: 2, code: 451 } }),
    });
    expect(put.status).toBe(200);
    const mail = transport();
    for (let i = 0; i < 2; i += 1) {
      await expect(mail.sendMail(thankYou)).rejects.toMatchObject({
        responseCode: 451,
        response: expect.stringContaining('4.3.0'),
      });
    }
    await mail.sendMail(thankYou);
    expect(await outbox.messages()).toHaveLength(1);

    const bad = await fetch(`${outbox.apiUrl}/__control/faults`, {
      method: 'PUT',
      body: JSON.stringify({ rejectNext: { code: 250 } }),
    });
    expect(bad.status).toBe(400);
    expect(outbox.faults.state().rejectNext).toEqual([]);
  });

  it('refuses a recipient at RCPT TO when asked to', async () => {
    outbox.faults.rejectNext(1, 550, undefined, 'rcpt');
    await expect(transport().sendMail(thankYou)).rejects.toMatchObject({ responseCode: 550 });
    expect(await emlFiles()).toEqual([]);
  });

  it('refuses only the named recipient at RCPT TO, whatever its case, and delivers to the others', async () => {
    outbox.faults.rejectNext(1, 550, '5.1.1 Mailbox unavailable', 'rcpt', 'Gone@Example.org');
    const info = await transport().sendMail({ ...thankYou, to: ['kid@example.org', 'gone@example.org'] });
    expect(info.accepted).toEqual(['kid@example.org']);
    expect(info.rejected).toEqual(['gone@example.org']);
    expect(outbox.faults.state().rejectNext).toEqual([]);
    expect((await outbox.messages()).map((message) => message.envelope.to)).toEqual([['kid@example.org']]);
    // Another recipient does not use the rule up: it waits for the one it names.
    outbox.faults.rejectNext(1, 550, '5.1.1 Mailbox unavailable', 'rcpt', 'gone@example.org');
    await transport().sendMail(thankYou);
    expect(outbox.faults.state().rejectNext).toHaveLength(1);
    await expect(transport().sendMail({ ...thankYou, to: 'gone@example.org' })).rejects.toMatchObject({
      responseCode: 550,
      command: 'RCPT TO',
      response: expect.stringContaining('5.1.1'),
    });
  });

  it('keeps refusing the sender at MAIL FROM while a standing refusal holds, and accepts once it is replaced by none', async () => {
    const put = await fetch(`${outbox.apiUrl}/__control/faults`, {
      method: 'PUT',
      body: JSON.stringify({
        refuse: {
          stage: 'mail',
          code: 554,
          message: '5.7.1 Message rejected: Email address is not verified',
        },
      }),
    });
    expect(put.status).toBe(200);
    const mail = transport();
    for (let i = 0; i < 3; i += 1) {
      await expect(mail.sendMail(thankYou)).rejects.toMatchObject({
        responseCode: 554,
        command: 'MAIL FROM',
        response: expect.stringContaining('Email address is not verified'),
      });
    }
    expect(outbox.faults.state().refuse).toHaveLength(1);
    const fixed = await fetch(`${outbox.apiUrl}/__control/faults`, {
      method: 'PUT',
      body: JSON.stringify({ refuse: [] }),
    });
    expect(fixed.status).toBe(200);
    await mail.sendMail(thankYou);
    expect(await outbox.messages()).toHaveLength(1);
    // A recipient names a mailbox: it means nothing at another stage.
    const bad = await fetch(`${outbox.apiUrl}/__control/faults`, {
      method: 'PUT',
      body: JSON.stringify({ refuse: { stage: 'mail', code: 554, recipient: 'kid@example.org' } }),
    });
    expect(bad.status).toBe(400);
    expect(outbox.faults.state().refuse).toEqual([]);
  });

  it('refuses connections while down, and accepts again on the same port once up', async () => {
    const port = outbox.port;
    const put = await fetch(`${outbox.apiUrl}/__control/faults`, {
      method: 'PUT',
      body: JSON.stringify({ down: true }),
    });
    expect(put.status).toBe(200);
    await expect(transport().sendMail(thankYou)).rejects.toMatchObject({ code: 'ESOCKET' });
    await expect(transport().sendMail(thankYou)).rejects.toThrow(/ECONNREFUSED/);

    expect((await fetch(`${outbox.apiUrl}/__control/faults`, { method: 'DELETE' })).status).toBe(200);
    expect(outbox.port).toBe(port);
    await transport().sendMail(thankYou);
    expect(await outbox.messages()).toHaveLength(1);
  });
});

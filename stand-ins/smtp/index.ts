// SMTP outbox: a real SMTP server on loopback (smtp-server) that stores every message it accepts as an .eml
// file, with the stand-ins' control surface over HTTP (stand-ins/http.ts) for tests and people to read what arrived,
// and faults (refused messages, a server that is down) that make the thank-you mail's failure paths real.

import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { CONTROL_PREFIX, close, listen, sendJson, serveControl } from '../http.ts';
import { SmtpFaults, smtpError } from './faults.ts';
import { Mailbox } from './mailbox.ts';

export type { OutboxMessage } from './mailbox.ts';

export interface SmtpOutboxOptions {
  host?: string;
  /** SMTP port (0: any free port). */
  port?: number;
  /** HTTP control port (0: any free port). */
  apiPort?: number;
  /** Directory for the .eml files, created if missing (default: a new temporary directory). */
  dir?: string;
  quiet?: boolean;
  log?: (line: string) => void;
}

/** The running outbox: `url` works as an SMTP_URL (any credentials are accepted), `apiUrl` is its HTTP control. */
export type SmtpOutbox = Awaited<ReturnType<typeof startSmtpOutbox>>;

/** The largest message accepted, in bytes; larger ones get 552. */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

export async function startSmtpOutbox(options: SmtpOutboxOptions = {}) {
  const host = options.host ?? '127.0.0.1';
  const log = options.quiet ? () => {} : (options.log ?? ((line: string) => console.log(line)));
  const dir = resolve(options.dir ?? (await mkdtemp(join(tmpdir(), 'goody-outbox-'))));
  const mailbox = new Mailbox(dir);
  await mailbox.init();

  const smtp = new SMTPServer({
    // Loopback only and no certificate to offer: plain SMTP, with AUTH allowed over it and never required,
    // so both "smtp://host:port" and "smtp://user:pass@host:port" connection strings work.
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    allowInsecureAuth: true,
    size: MAX_MESSAGE_BYTES,
    banner: 'GOODY outbox (local SMTP stand-in)',
    logger: false,
    closeTimeout: 1_000,
    onAuth(_auth, _session, callback) {
      callback(null, { user: 'outbox' });
    },
    onMailFrom(_address, _session, callback) {
      const rule = faults.take('mail');
      callback(rule ? smtpError(rule) : null);
    },
    onRcptTo(address, _session, callback) {
      const rule = faults.take('rcpt', address.address);
      callback(rule ? smtpError(rule) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (error) => callback(error));
      stream.on('end', () => {
        // The whole message has been read before answering, as smtp-server requires, whatever the answer.
        if (stream.sizeExceeded) {
          return callback(
            smtpError({ code: 552, message: `5.3.4 Message exceeds the ${MAX_MESSAGE_BYTES} byte limit` }),
          );
        }
        const rule = faults.take('data');
        if (rule) {
          log(`[smtp] refused a message with ${rule.code} (injected fault)`);
          return callback(smtpError(rule));
        }
        const raw = Buffer.concat(chunks);
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
          to: session.envelope.rcptTo.map((r) => r.address),
        };
        mailbox.store(raw, envelope).then(
          (id) => {
            // Sizes and counts only: recipients are minors' addresses.
            log(`[smtp] stored ${id}.eml (${raw.length} bytes, ${envelope.to.length} recipient(s))`);
            callback(null, `OK: queued as ${id}`);
          },
          (error: unknown) => {
            console.error('[smtp] could not store a message:', error);
            callback(smtpError({ code: 451, message: '4.3.0 Could not store the message' }));
          },
        );
      });
    },
  });
  smtp.on('error', (error) => {
    if (!options.quiet) console.error('[smtp] server error:', error);
  });
  const listener = smtp.server;

  let smtpPort = options.port ?? 0;
  // Declared before the port opens: the SMTP callbacks above read it.
  const faults = new SmtpFaults(async (listening) => {
    if (listening) {
      await listen(listener, smtpPort, host);
    } else {
      const closed = new Promise<void>((done) => listener.close(() => done()));
      for (const connection of smtp.connections) connection.close();
      await closed;
    }
  });

  smtpPort = await listen(listener, smtpPort, host);

  const control = {
    state: async () => {
      const messages = await mailbox.messages();
      return { total: messages.length, messages };
    },
    reset: async () => {
      await mailbox.clear();
      await faults.clear();
    },
    faults,
  };
  const api = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://outbox');
    if (url.pathname.startsWith(CONTROL_PREFIX)) {
      void serveControl(req, res, url.pathname, control);
    } else {
      sendJson(res, 404, { message: `No route ${req.method} ${url.pathname}; see ${CONTROL_PREFIX}state.` });
    }
  });

  let apiPort: number;
  try {
    apiPort = await listen(api, options.apiPort ?? 0, host);
  } catch (error) {
    await new Promise<void>((done) => smtp.close(() => done()));
    throw error;
  }

  return {
    host,
    port: smtpPort,
    url: `smtp://${host}:${smtpPort}`,
    apiUrl: `http://${host}:${apiPort}`,
    dir,
    /** Every stored message, parsed, oldest first. */
    messages: () => mailbox.messages(),
    /** Deletes every stored message. */
    clear: () => mailbox.clear(),
    faults,
    async stop() {
      const apiClosed = close(api);
      const smtpClosed = faults.down
        ? Promise.resolve()
        : new Promise<void>((done) => smtp.close(() => done()));
      await Promise.all([apiClosed, smtpClosed]);
    },
  };
}

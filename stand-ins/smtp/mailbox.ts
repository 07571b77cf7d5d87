// The outbox directory: one <id>.eml per message exactly as received (openable in any mail client), and an
// <id>.json beside it with the SMTP envelope, which the message itself does not carry (Bcc recipients, the
// bounce address).

import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AddressObject, simpleParser } from 'mailparser';

export interface Envelope {
  from: string | null;
  to: string[];
}

/** One stored message, parsed: header names in lower case (repeated headers joined with "\n"), dates as ISO. */
export type OutboxMessage = Awaited<ReturnType<typeof parseMessage>>;

interface EnvelopeFile {
  envelope: Envelope;
  receivedAt: string;
}

const ID_PATTERN = /^[0-9]{13}-[0-9]{6}-[0-9a-f]{6}$/;

/** undefined for a file or directory that is not there; any other failure is thrown. */
function missing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}

export class Mailbox {
  private seq = 0;
  private readonly parsed = new Map<string, OutboxMessage>();

  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  async store(raw: Buffer, envelope: Envelope): Promise<string> {
    this.seq = (this.seq + 1) % 1_000_000;
    const id = `${String(Date.now()).padStart(13, '0')}-${String(this.seq).padStart(6, '0')}-${randomBytes(3).toString('hex')}`;
    const meta: EnvelopeFile = { envelope, receivedAt: new Date().toISOString() };
    // The envelope first, so a listed .eml always has its envelope beside it.
    await writeFile(join(this.dir, `${id}.json`), JSON.stringify(meta, null, 2));
    await writeFile(join(this.dir, `${id}.eml`), raw);
    return id;
  }

  private async ids(): Promise<string[]> {
    const names = (await readdir(this.dir).catch(missing)) ?? [];
    return names
      .filter((name) => name.endsWith('.eml'))
      .map((name) => name.slice(0, -4))
      .filter((id) => ID_PATTERN.test(id))
      .sort();
  }

  async messages(): Promise<OutboxMessage[]> {
    const list: OutboxMessage[] = [];
    for (const id of await this.ids()) {
      const file = join(this.dir, `${id}.eml`);
      let message = this.parsed.get(id);
      if (!message) {
        const raw = await readFile(file).catch(missing);
        if (!raw) continue;
        message = await parseMessage(id, file, raw, await this.readEnvelope(id));
        this.parsed.set(id, message);
      }
      list.push(message);
    }
    return list;
  }

  async clear(): Promise<void> {
    this.parsed.clear();
    const ids = await this.ids();
    await Promise.all(
      ids.flatMap((id) => [
        rm(join(this.dir, `${id}.eml`), { force: true }),
        rm(join(this.dir, `${id}.json`), { force: true }),
      ]),
    );
  }

  private async readEnvelope(id: string): Promise<EnvelopeFile> {
    try {
      return JSON.parse(await readFile(join(this.dir, `${id}.json`), 'utf8')) as EnvelopeFile;
    } catch {
      // An .eml dropped into the directory by hand has no envelope; it is still listed.
      return {
        envelope: { from: null, to: [] },
        receivedAt: new Date(Number(id.slice(0, 13))).toISOString(),
      };
    }
  }
}

async function parseMessage(id: string, file: string, raw: Buffer, meta: EnvelopeFile) {
  const mail = await simpleParser(raw, { skipImageLinks: true });
  const headers: Record<string, string> = {};
  for (const { key, line } of mail.headerLines) {
    const value = line.slice(line.indexOf(':') + 1).trim();
    headers[key] = headers[key] === undefined ? value : `${headers[key]}\n${value}`;
  }
  return {
    id,
    file,
    from: mail.from?.value[0]?.address ?? null,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    subject: mail.subject ?? '',
    text: mail.text ?? '',
    html: mail.html === false ? null : mail.html,
    headers,
    date: mail.date ? mail.date.toISOString() : null,
    messageId: mail.messageId ?? null,
    envelope: meta.envelope,
    size: raw.length,
    receivedAt: meta.receivedAt,
  };
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  if (!field) return [];
  const objects = Array.isArray(field) ? field : [field];
  return objects
    .flatMap((o) => o.value.flatMap((v) => (v.group ? v.group.map((member) => member.address) : [v.address])))
    .filter((address): address is string => Boolean(address));
}

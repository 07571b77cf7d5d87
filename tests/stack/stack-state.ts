// What a running stack holds, read as the stack tests read it: the rows and their delivery parts past the rules
// (the owner credential the Admin SDK sends the emulator), the SMTP outbox and the MailerLite stand-in over their
// control surfaces, and faults put on a stand-in (or the Cloud Tasks emulator, GOODY_TASKS_EMULATOR_FAULTS).
// Each takes the stack's ports (launcher-process.ts), so a case reads only its own stack.

import type { StackPorts } from './launcher-process.ts';
import { pageDocumentId, storeSignupAsThePage } from './page-writes.ts';

const DOCUMENTS = 'projects/demo-goody/databases/(default)/documents';
const local = (port: number) => `http://127.0.0.1:${port}`;

export type FirestoreValue = {
  stringValue?: string;
  integerValue?: string;
  mapValue?: { fields?: Record<string, FirestoreValue> };
};

export interface StoredDocument {
  id: string;
  fields: Record<string, FirestoreValue>;
}

/** One part of a row's delivery (functions/src/delivery/part-life.ts), as stored. */
export interface StoredPart {
  state?: string;
  reason?: string;
  round?: number;
  attempts?: number;
  last_error?: string;
}

export interface OutboxMessage {
  to: string[];
  text: string;
  receivedAt: string;
}

export interface MailerLiteAccount {
  subscribers: Array<{ email: string; groups: string[]; status: string }>;
  requests: Array<{ method: string; path: string }>;
}

/** The insert as the page makes it (under the rules, an id of addDoc's shape, `label` first); the row's id. */
export async function signUp(ports: StackPorts, email: string, label = ''): Promise<string> {
  const id = pageDocumentId(label);
  await storeSignupAsThePage(`127.0.0.1:${ports.GOODY_FIRESTORE_PORT}`, id, email);
  return id;
}

/** A row's two parts; `indexed`: the trigger wrote its delivery. */
export async function rowParts(
  ports: StackPorts,
  id: string,
): Promise<{ contact: StoredPart; thank_you: StoredPart; indexed: boolean }> {
  const response = await fetch(
    `${local(ports.GOODY_FIRESTORE_PORT)}/v1/${DOCUMENTS}/email_subscriptions/${id}`,
    {
      headers: { authorization: 'Bearer owner' },
    },
  );
  const doc = (await response.json()) as { fields?: Record<string, FirestoreValue> };
  const delivery = doc.fields?.delivery?.mapValue?.fields;
  return {
    contact: partOf(delivery, 'contact'),
    thank_you: partOf(delivery, 'thank_you'),
    indexed: !!delivery,
  };
}

function partOf(delivery: Record<string, FirestoreValue> | undefined, name: string): StoredPart {
  const fields = delivery?.[name]?.mapValue?.fields ?? {};
  return {
    state: fields.state?.stringValue,
    reason: fields.reason?.stringValue,
    round: fields.round ? Number(fields.round.integerValue) : undefined,
    attempts: fields.attempts ? Number(fields.attempts.integerValue) : undefined,
    last_error: fields.last_error?.stringValue,
  };
}

/** Every document of a collection, page by page. */
export async function documents(ports: StackPorts, collection: string): Promise<StoredDocument[]> {
  const found: StoredDocument[] = [];
  let pageToken = '';
  do {
    const url = `${local(ports.GOODY_FIRESTORE_PORT)}/v1/${DOCUMENTS}/${collection}?pageSize=300${pageToken ? `&pageToken=${pageToken}` : ''}`;
    const page = (await (await fetch(url, { headers: { authorization: 'Bearer owner' } })).json()) as {
      documents?: Array<{ name: string; fields?: Record<string, FirestoreValue> }>;
      nextPageToken?: string;
    };
    for (const doc of page.documents ?? [])
      found.push({ id: doc.name.slice(doc.name.lastIndexOf('/') + 1), fields: doc.fields ?? {} });
    pageToken = page.nextPageToken ?? '';
  } while (pageToken);
  return found;
}

/** Every message in the SMTP outbox. */
export async function outbox(ports: StackPorts): Promise<OutboxMessage[]> {
  const state = await fetch(`${local(ports.GOODY_SMTP_API_PORT)}/__control/state`);
  return ((await state.json()) as { messages: OutboxMessage[] }).messages;
}

/** The MailerLite stand-in's account: its subscribers and the requests it answered. */
export async function mailerLiteAccount(ports: StackPorts): Promise<MailerLiteAccount> {
  return (await (
    await fetch(`${local(ports.GOODY_MAILERLITE_PORT)}/__control/state`)
  ).json()) as MailerLiteAccount;
}

/** PUT /__control/faults on the stand-in or the emulator at `port`; the faults as they now stand. */
export async function putFaults(port: number, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${local(port)}/__control/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`faults ${JSON.stringify(body)}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

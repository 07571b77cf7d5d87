// The stack's services as tests see them: the Firebase Firestore emulator (its REST API with the owner
// credential, its reset and rules endpoints, and the process itself, to stop it answering), the stand-ins'
// control endpoints (state, faults, reset), and the callables over the callable HTTP protocol. Everything
// here talks to loopback.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  CALLABLES,
  type CallableName,
  COLLECTIONS,
  type SignupSource,
  type SubscriptionType,
  type SyncReply,
} from '@goody/contract';
import { portToPid } from 'pid-port';
import type { Page } from 'playwright-core';
import { PROJECT_ID, repoRoot, type StackInfo } from './stack.ts';

async function request(url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(30_000) });
  if (!response.ok) {
    throw new Error(`${init.method ?? 'GET'} ${url} answered ${response.status}: ${await response.text()}`);
  }
  return response;
}

const json = (body: unknown): RequestInit => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

// ---------------------------------------------------------------- Firebase Firestore emulator

/** A stored document, read from the emulator's REST API. */
export interface StoredDocument {
  path: string;
  id: string;
  /** Plain JSON (timestamps as ISO strings). */
  data: Record<string, unknown>;
  /** The fields exactly, in the API's proto3 JSON form (so a timestamp shows as `timestampValue`). */
  fields: Record<string, Record<string, unknown>>;
}

/** The emulator lets this credential past the security rules: what the Admin SDK sends it. */
const OWNER = { authorization: 'Bearer owner' };

const FIRESTORE_RULES = readFileSync(path.join(repoRoot, 'firestore.rules'), 'utf8');
const SIGNUP_CREATE =
  'allow create: if isPageDocumentId(subscriptionId) && isValidSignup(request.resource.data);';

function plainValue(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('timestampValue' in value) return value.timestampValue;
  if ('integerValue' in value) return Number(value.integerValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('booleanValue' in value) return value.booleanValue;
  if ('nullValue' in value) return null;
  if ('mapValue' in value) {
    const fields = (value.mapValue as { fields?: Record<string, Record<string, unknown>> }).fields ?? {};
    return Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, plainValue(field)]));
  }
  if ('arrayValue' in value) {
    return ((value.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(plainValue);
  }
  return value;
}

export class FirestoreControl {
  private paused: number | undefined;
  private rulesChanged = false;

  constructor(private readonly baseUrl: string) {}

  private get documentsPath(): string {
    return `projects/${PROJECT_ID}/databases/(default)/documents`;
  }

  async reset(): Promise<void> {
    await request(`${this.baseUrl}/emulator/v1/${this.documentsPath}`, { method: 'DELETE' });
  }

  private async loadRules(rules: string): Promise<void> {
    await request(`${this.baseUrl}/emulator/v1/projects/${PROJECT_ID}:securityRules`, {
      method: 'PUT',
      ...json({ rules: { files: [{ name: 'firestore.rules', content: rules }] } }),
    });
  }

  /** firestore.rules with sign-ups closed: the database itself refuses the page's insert. */
  async refuseSignups(): Promise<void> {
    if (!FIRESTORE_RULES.includes(SIGNUP_CREATE))
      throw new Error(`firestore.rules no longer has "${SIGNUP_CREATE}"`);
    this.rulesChanged = true;
    await this.loadRules(FIRESTORE_RULES.replace(SIGNUP_CREATE, 'allow create: if false;'));
  }

  /**
   * Stops the emulator's process (SIGSTOP): connections are still accepted by the kernel, and nothing answers,
   * as with a database that stopped responding. `clearFaults()` lets it go on (SIGCONT).
   */
  async stopAnswering(): Promise<void> {
    const { port } = new URL(this.baseUrl);
    const pid = await portToPid({ port: Number(port), host: '127.0.0.1' });
    if (pid === undefined) throw new Error(`nothing listens on the Firestore port ${port}`);
    process.kill(pid, 'SIGSTOP');
    this.paused = pid;
  }

  /**
   * The browser's connections to the database are reset before any answer, as on a link that drops them
   * (the database itself keeps running for everyone else). Lifted when the page closes.
   */
  async dropConnectionsFrom(page: Page): Promise<() => Promise<void>> {
    const pattern = `${this.baseUrl}/**`;
    await page.route(pattern, (route) => route.abort('connectionreset'));
    return () => page.unroute(pattern);
  }

  /** Lets a stopped emulator answer again and loads firestore.rules back. */
  async clearFaults(): Promise<void> {
    if (this.paused !== undefined) {
      process.kill(this.paused, 'SIGCONT');
      this.paused = undefined;
    }
    if (this.rulesChanged) {
      await this.loadRules(FIRESTORE_RULES);
      this.rulesChanged = false;
    }
  }

  async documents(collection: string): Promise<StoredDocument[]> {
    const documents: StoredDocument[] = [];
    let pageToken = '';
    do {
      const query = new URLSearchParams({ pageSize: '300', ...(pageToken ? { pageToken } : {}) });
      const response = await request(`${this.baseUrl}/v1/${this.documentsPath}/${collection}?${query}`, {
        headers: OWNER,
      });
      const body = (await response.json()) as {
        documents?: { name: string; fields?: Record<string, Record<string, unknown>> }[];
        nextPageToken?: string;
      };
      for (const doc of body.documents ?? []) {
        const fields = doc.fields ?? {};
        const docPath = doc.name.slice(doc.name.indexOf('/documents/') + '/documents/'.length);
        documents.push({
          path: docPath,
          id: docPath.slice(docPath.lastIndexOf('/') + 1),
          data: Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, plainValue(value)])),
          fields,
        });
      }
      pageToken = body.nextPageToken ?? '';
    } while (pageToken);
    return documents;
  }

  /**
   * Stores a sign-up the way the site's insert does (REST commit, server timestamp for created_at), for tests
   * whose subject is what happens to stored sign-ups rather than the form.
   */
  async storeSignup(
    id: string,
    email: string,
    subscriptionType: SubscriptionType,
    source: SignupSource,
  ): Promise<void> {
    await this.commit({
      update: {
        name: `${this.documentsPath}/${COLLECTIONS.signups}/${id}`,
        fields: {
          email: { stringValue: email },
          subscription_type: { stringValue: subscriptionType },
          source: { stringValue: source },
        },
      },
      currentDocument: { exists: false },
      updateTransforms: [{ fieldPath: 'created_at', setToServerValue: 'REQUEST_TIME' }],
    });
  }

  /** Another operator's Sync holding its lease (`_sync/mailerlite`) for `ms`, as a run in flight holds it. */
  async holdSyncLease(owner: string, ms: number): Promise<void> {
    const expiresAt = new Date(Date.now() + ms).toISOString();
    await this.commit({
      update: {
        name: `${this.documentsPath}/_sync/mailerlite`,
        fields: {
          lease: {
            mapValue: {
              fields: { owner: { stringValue: owner }, expires_at: { timestampValue: expiresAt } },
            },
          },
        },
      },
    });
  }

  private async commit(write: unknown): Promise<void> {
    const response = await request(`${this.baseUrl}/v1/${this.documentsPath}:commit`, {
      method: 'POST',
      headers: { ...OWNER, 'content-type': 'application/json' },
      body: JSON.stringify({ writes: [write] }),
    });
    await response.arrayBuffer();
  }
}

// ---------------------------------------------------------------- MailerLite stand-in

export interface MailerLiteSubscriber {
  id: string;
  email: string;
  status: string;
  groups: string[];
}

export interface MailerLiteGroup {
  id: string;
  name: string;
}

export interface MailerLiteState {
  subscribers: MailerLiteSubscriber[];
  groups: MailerLiteGroup[];
  requests: { method: string; path: string; status: number }[];
}

/** The group names the launcher configures (dev/launcher/launcher.ts, functionsParams). */
export const MAILERLITE_GROUP_NAMES = { updates: 'GOODY updates', club: 'GOODY club' } as const;

export interface MailerLiteFaults {
  failNext?: { count?: number; status: number; body?: unknown; pathPrefix?: string; method?: string };
  dropNext?: number;
  latencyMs?: number;
  down?: boolean;
}

export class MailerLiteControl {
  constructor(private readonly baseUrl: string) {}

  async state(): Promise<MailerLiteState> {
    return (await (await request(`${this.baseUrl}/__control/state`)).json()) as MailerLiteState;
  }

  async setFaults(faults: MailerLiteFaults): Promise<void> {
    await request(`${this.baseUrl}/__control/faults`, { method: 'PUT', ...json(faults) });
  }

  async clearFaults(): Promise<void> {
    await request(`${this.baseUrl}/__control/faults`, { method: 'DELETE' });
  }

  /** Clears subscribers, groups, the request log, rate-limit windows and faults. */
  async reset(): Promise<void> {
    await request(`${this.baseUrl}/__control/reset`, { method: 'POST' });
  }

  /** Fresh rate-limit windows, keeping subscribers and groups. */
  async freshRateLimitWindows(): Promise<void> {
    await request(`${this.baseUrl}/__control/limits`, { method: 'PUT', ...json({}) });
  }

  async setLimits(limits: Record<string, number>): Promise<void> {
    await request(`${this.baseUrl}/__control/limits`, { method: 'PUT', ...json(limits) });
  }

  /** The names of the groups the subscriber with this address is in; undefined when there is no such subscriber. */
  async groupsOf(email: string): Promise<string[] | undefined> {
    const state = await this.state();
    const subscriber = state.subscribers.find((candidate) => candidate.email === email.toLowerCase());
    if (!subscriber) return undefined;
    const names = new Map(state.groups.map((group) => [group.id, group.name]));
    return subscriber.groups.map((id) => names.get(id) ?? `unknown group ${id}`).sort();
  }
}

// ---------------------------------------------------------------- SMTP outbox

export interface OutboxMessage {
  id: string;
  from: string;
  to: string[];
  subject: string;
  text: string;
  /** The Message-ID header: a copy the relay took twice carries the same one. */
  messageId: string | null;
}

export class SmtpControl {
  constructor(private readonly baseUrl: string) {}

  async messages(): Promise<OutboxMessage[]> {
    return (
      (await (await request(`${this.baseUrl}/__control/state`)).json()) as { messages: OutboxMessage[] }
    ).messages;
  }

  /**
   * The messages sent to `address`. A case asks for its own address's mail: an earlier case's sign-up is
   * delivered by the queues in the background, and its thank-you may land after the outbox was cleared.
   */
  async messagesTo(address: string): Promise<OutboxMessage[]> {
    return (await this.messages()).filter((message) => message.to.includes(address));
  }

  /** Deletes every message (and clears the faults). */
  async clear(): Promise<void> {
    await request(`${this.baseUrl}/__control/reset`, { method: 'POST' });
  }

  /** `down: true`: the SMTP port refuses connections, as a stopped mail server does. */
  async setFaults(faults: { down?: boolean; rejectNext?: { count?: number; code: number } }): Promise<void> {
    await request(`${this.baseUrl}/__control/faults`, { method: 'PUT', ...json(faults) });
  }

  async clearFaults(): Promise<void> {
    await request(`${this.baseUrl}/__control/faults`, { method: 'DELETE' });
  }
}

// ---------------------------------------------------------------- the callables

export interface CallableAnswer {
  status: number;
  /** `{result}` on success, `{error: {status, message}}` on failure (the callable protocol). */
  body: { result?: unknown; error?: { status: string; message: string } };
}

/**
 * One call over the callable HTTP protocol, as the Functions SDK makes it: to the Functions emulator, or to
 * `url` (the site's own /api/<name>, which Hosting rewrites to the function); with `appCheckToken`, carrying it
 * as the SDK does.
 */
export async function callCallable(
  stack: StackInfo,
  name: string,
  data: unknown,
  options: { timeoutMs?: number; url?: string; appCheckToken?: string } = {},
): Promise<CallableAnswer> {
  const { headers, body } = json({ data });
  const response = await fetch(options.url ?? `${stack.functionsUrl}/${name}`, {
    method: 'POST',
    headers: {
      ...(headers as Record<string, string>),
      ...(options.appCheckToken ? { 'x-firebase-appcheck': options.appCheckToken } : {}),
    },
    body,
    signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
  });
  return { status: response.status, body: (await response.json()) as CallableAnswer['body'] };
}

export type { SyncReply };

// ---------------------------------------------------------------- all of it

export class Services {
  readonly firestore: FirestoreControl;
  readonly mailerLite: MailerLiteControl;
  readonly smtp: SmtpControl;

  /**
   * `appCheckToken`: what the suite's own calls carry in the App Check run, where the callables refuse a call
   * without one (support/app-check.ts).
   */
  constructor(
    readonly stack: StackInfo,
    private readonly appCheckToken?: string,
  ) {
    this.firestore = new FirestoreControl(stack.firestoreUrl);
    this.mailerLite = new MailerLiteControl(stack.mailerLiteUrl);
    this.smtp = new SmtpControl(stack.smtpApiUrl);
  }

  /**
   * A clean slate between cases: no faults anywhere, an empty database (sign-ups, sync cursor and lease,
   * thank-you records), an empty outbox, fresh MailerLite rate windows.
   *
   * MailerLite's subscribers and groups are kept: the functions resolve the group names to ids once per
   * instance and keep them, so a stand-in reset (which deletes the groups) would leave them sending ids that
   * no longer exist. Cases use addresses of their own instead.
   */
  async resetAll(): Promise<void> {
    await Promise.all([this.firestore.clearFaults(), this.mailerLite.clearFaults(), this.smtp.clearFaults()]);
    await Promise.all([this.firestore.reset(), this.smtp.clear(), this.mailerLite.freshRateLimitWindows()]);
  }

  call(name: CallableName, data: unknown, options?: { timeoutMs?: number }): Promise<CallableAnswer> {
    return callCallable(this.stack, name, data, { ...options, appCheckToken: this.appCheckToken });
  }

  async sync(options?: { timeoutMs?: number }): Promise<SyncReply> {
    const answer = await this.call(CALLABLES.syncEmails, {}, options);
    if (answer.status !== 200)
      throw new Error(`sync answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body.result as SyncReply;
  }
}

// The stack's services as tests see them: the stand-ins' control endpoints (state, faults, reset) and the
// callables over the callable HTTP protocol. Everything here is plain fetch to loopback.

import {
  CALLABLES,
  type CallableName,
  COLLECTIONS,
  type SignupSource,
  type SubscriptionType,
  type SyncReply,
} from '@goody/contract';
import { PROJECT_ID, type StackInfo } from './stack.ts';

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

// ---------------------------------------------------------------- Firestore stand-in

/** A stored document as the stand-in's control state lists it. */
export interface StoredDocument {
  path: string;
  id: string;
  /** Plain JSON (timestamps as ISO strings). */
  data: Record<string, unknown>;
  /** The fields exactly, in the API's proto3 JSON form (so a timestamp shows as `timestampValue`). */
  fields: Record<string, Record<string, unknown>>;
}

export type FirestoreFaults =
  | { unavailable: boolean | 'hang' | 'drop' }
  | { rejectWrites: { collection: string; count?: number; code?: string; message?: string } };

export class FirestoreControl {
  constructor(private readonly baseUrl: string) {}

  async reset(): Promise<void> {
    await request(`${this.baseUrl}/emulator/v1/projects/${PROJECT_ID}/databases/(default)/documents`, {
      method: 'DELETE',
    });
  }

  async setFaults(faults: FirestoreFaults): Promise<void> {
    await request(`${this.baseUrl}/__control/faults`, { method: 'PUT', ...json(faults) });
  }

  async clearFaults(): Promise<void> {
    await request(`${this.baseUrl}/__control/faults`, { method: 'DELETE' });
  }

  async documents(collection: string): Promise<StoredDocument[]> {
    const response = await request(
      `${this.baseUrl}/__control/state?collection=${encodeURIComponent(collection)}`,
    );
    return ((await response.json()) as { documents: StoredDocument[] }).documents;
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
    const documents = `projects/${PROJECT_ID}/databases/(default)/documents`;
    const response = await request(`${this.baseUrl}/v1/${documents}:commit`, {
      method: 'POST',
      ...json({
        writes: [
          {
            update: {
              name: `${documents}/${COLLECTIONS.signups}/${id}`,
              fields: {
                email: { stringValue: email },
                subscription_type: { stringValue: subscriptionType },
                source: { stringValue: source },
              },
            },
            currentDocument: { exists: false },
            updateTransforms: [{ fieldPath: 'created_at', setToServerValue: 'REQUEST_TIME' }],
          },
        ],
      }),
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
}

export class SmtpControl {
  constructor(private readonly baseUrl: string) {}

  async messages(): Promise<OutboxMessage[]> {
    return (
      (await (await request(`${this.baseUrl}/__control/state`)).json()) as { messages: OutboxMessage[] }
    ).messages;
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

/** One call over the callable HTTP protocol, as the Functions SDK makes it. */
export async function callCallable(
  stack: StackInfo,
  name: string,
  data: unknown,
  options: { timeoutMs?: number } = {},
): Promise<CallableAnswer> {
  const response = await fetch(`${stack.functionsUrl}/${name}`, {
    method: 'POST',
    ...json({ data }),
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

  constructor(readonly stack: StackInfo) {
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
    return callCallable(this.stack, name, data, options);
  }

  async sync(options?: { timeoutMs?: number }): Promise<SyncReply> {
    const answer = await this.call(CALLABLES.syncEmails, {}, options);
    if (answer.status !== 200)
      throw new Error(`sync answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body.result as SyncReply;
  }
}

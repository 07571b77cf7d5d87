// The in-memory account behind the MailerLite stand-in: subscribers and groups, and their JSON shapes as
// connect.mailerlite.com returns them (developers.mailerlite.com, Subscribers and Groups, and responses recorded
// in mailerlite/mailerlite-python's VCR cassettes), without the campaign statistics nobody here reads.

export const SUBSCRIBER_STATUSES = ['active', 'unsubscribed', 'unconfirmed', 'bounced', 'junk'] as const;
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];

// Every account has these fields; custom fields must be created before a subscriber can carry them, and
// MailerLite drops values for keys the account does not have.
const DEFAULT_FIELDS = ['name', 'last_name', 'company', 'country', 'city', 'phone', 'state', 'z_i_p'];

type FieldValue = string | number | null;

export interface Subscriber {
  id: string;
  email: string;
  status: SubscriberStatus;
  source: string;
  fields: Record<string, FieldValue>;
  groupIds: string[];
  createdAt: number;
  updatedAt: number;
  subscribedAt: number | null;
  unsubscribedAt: number | null;
  optedInAt: string | null;
}

export interface Group {
  id: string;
  name: string;
  createdAt: number;
}

/** "2024-12-04 12:24:32": the UTC timestamp format of subscriber and group resources. */
export function formatTimestamp(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export class Store {
  readonly subscribers = new Map<string, Subscriber>();
  readonly groups = new Map<string, Group>();
  private lastId = 0n;

  constructor(readonly customFields: readonly string[]) {}

  get fieldKeys(): string[] {
    return [...DEFAULT_FIELDS, ...this.customFields.filter((key) => !DEFAULT_FIELDS.includes(key))];
  }

  /** 18-digit decimal strings like the real ids, so a client reading them as JSON numbers loses precision. */
  private nextId(nowMs: number): string {
    const candidate =
      120_000_000_000_000_000n + BigInt(nowMs) * 1000n + BigInt(Math.floor(Math.random() * 1000));
    this.lastId = candidate > this.lastId ? candidate : this.lastId + 1n;
    return this.lastId.toString();
  }

  clear(): void {
    this.subscribers.clear();
    this.groups.clear();
  }

  findSubscriber(idOrEmail: string): Subscriber | undefined {
    if (!idOrEmail.includes('@')) return this.subscribers.get(idOrEmail);
    const email = idOrEmail.trim().toLowerCase();
    return [...this.subscribers.values()].find((subscriber) => subscriber.email === email);
  }

  createSubscriber(email: string, now: number, source: string): Subscriber {
    const subscriber: Subscriber = {
      id: this.nextId(now),
      email: email.trim().toLowerCase(),
      status: 'active',
      source,
      fields: {},
      groupIds: [],
      createdAt: now,
      updatedAt: now,
      subscribedAt: now,
      unsubscribedAt: null,
      optedInAt: null,
    };
    this.subscribers.set(subscriber.id, subscriber);
    return subscriber;
  }

  createGroup(name: string, now: number): Group {
    const group: Group = { id: this.nextId(now), name, createdAt: now };
    this.groups.set(group.id, group);
    return group;
  }

  deleteGroup(group: Group): void {
    this.groups.delete(group.id);
    for (const subscriber of this.subscribers.values()) {
      subscriber.groupIds = subscriber.groupIds.filter((id) => id !== group.id);
    }
  }

  /** Merges known field keys into the subscriber; MailerLite drops values for fields the account lacks. */
  mergeFields(subscriber: Subscriber, fields: Record<string, unknown>): void {
    const known = new Set(this.fieldKeys);
    for (const [key, value] of Object.entries(fields)) {
      if (known.has(key)) {
        subscriber.fields[key] = value === null || typeof value === 'number' ? value : String(value);
      }
    }
  }

  subscriberJson(subscriber: Subscriber): Record<string, unknown> {
    return {
      id: subscriber.id,
      email: subscriber.email,
      status: subscriber.status,
      source: subscriber.source,
      subscribed_at: formatTimestamp(subscriber.subscribedAt),
      unsubscribed_at: formatTimestamp(subscriber.unsubscribedAt),
      created_at: formatTimestamp(subscriber.createdAt),
      updated_at: formatTimestamp(subscriber.updatedAt),
      fields: Object.fromEntries(this.fieldKeys.map((key) => [key, subscriber.fields[key] ?? null])),
      groups: subscriber.groupIds.flatMap((id) => {
        const group = this.groups.get(id);
        return group ? [this.groupJson(group)] : [];
      }),
      opted_in_at: subscriber.optedInAt,
    };
  }

  groupJson(group: Group): Record<string, unknown> {
    const members = [...this.subscribers.values()].filter((s) => s.groupIds.includes(group.id));
    const count = (status: SubscriberStatus) => members.filter((s) => s.status === status).length;
    return {
      id: group.id,
      name: group.name,
      active_count: count('active'),
      unsubscribed_count: count('unsubscribed'),
      unconfirmed_count: count('unconfirmed'),
      bounced_count: count('bounced'),
      junk_count: count('junk'),
      created_at: formatTimestamp(group.createdAt),
    };
  }
}

// Stricter than Laravel's bare `email` rule (which accepts "a@b"): an address needs a dot in its domain. The
// docs do not say how strict MailerLite is; erring strict means the stand-in never accepts an address the
// real service might refuse, so a client's 422 handling gets exercised.
const EMAIL_PATTERN = /^[^\s@"(),:;<>[\\\]]+@[^\s@"(),:;<>[\\\]]+\.[^\s@"(),:;<>[\\\]]+$/;

export function isValidEmail(email: string): boolean {
  return email.length <= 254 && EMAIL_PATTERN.test(email.trim());
}

// The in-memory account behind the MailerLite stand-in: subscribers and groups, and their JSON
// shapes as connect.mailerlite.com returns them (field names and formats taken from the developer docs at
// developers.mailerlite.com/docs/subscribers.html and groups.html, and from responses recorded in
// mailerlite/mailerlite-python's VCR cassettes).

export type SubscriberStatus = 'active' | 'unsubscribed' | 'unconfirmed' | 'bounced' | 'junk';
export const SUBSCRIBER_STATUSES: readonly SubscriberStatus[] = [
  'active',
  'unsubscribed',
  'unconfirmed',
  'bounced',
  'junk',
];

// Every account has these fields; custom fields must be created before a subscriber can carry them, and
// MailerLite drops values for keys the account does not have.
export const DEFAULT_FIELDS = ['name', 'last_name', 'company', 'country', 'city', 'phone', 'state', 'z_i_p'];

export type FieldValue = string | number | null;

export interface Subscriber {
  id: string;
  email: string;
  status: SubscriberStatus;
  source: string;
  fields: Record<string, FieldValue>;
  groupIds: string[];
  ipAddress: string | null;
  createdAt: number;
  updatedAt: number;
  subscribedAt: number | null;
  unsubscribedAt: number | null;
  optedInAt: string | null;
  optinIp: string | null;
}

export interface Group {
  id: string;
  name: string;
  createdAt: number;
}

export const ACCOUNT_ID = '1000001';

/** "2024-12-04 12:24:32": the UTC timestamp format of subscriber and group resources. */
export function formatTimestamp(ms: number | null): string | null {
  if (ms === null) return null;
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Ids are decimal strings of 18 digits, like the real ones (e.g. "139790465506477360"), so any client that
 * parses them as JSON numbers loses precision, exactly as it would against the real API.
 */
export class IdSource {
  private last = 0n;

  next(nowMs: number): string {
    let candidate =
      120_000_000_000_000_000n + BigInt(nowMs) * 1000n + BigInt(Math.floor(Math.random() * 1000));
    if (candidate <= this.last) candidate = this.last + 1n;
    this.last = candidate;
    return candidate.toString();
  }
}

export class Store {
  readonly subscribers = new Map<string, Subscriber>();
  readonly subscriberIdByEmail = new Map<string, string>();
  readonly groups = new Map<string, Group>();
  readonly ids = new IdSource();

  constructor(readonly customFields: readonly string[]) {}

  get fieldKeys(): string[] {
    return [...DEFAULT_FIELDS, ...this.customFields.filter((key) => !DEFAULT_FIELDS.includes(key))];
  }

  clear(): void {
    this.subscribers.clear();
    this.subscriberIdByEmail.clear();
    this.groups.clear();
  }

  findSubscriber(idOrEmail: string): Subscriber | undefined {
    if (idOrEmail.includes('@')) {
      const id = this.subscriberIdByEmail.get(normaliseEmail(idOrEmail));
      return id === undefined ? undefined : this.subscribers.get(id);
    }
    return this.subscribers.get(idOrEmail);
  }

  createSubscriber(email: string, now: number, source: string): Subscriber {
    const subscriber: Subscriber = {
      id: this.ids.next(now),
      email: normaliseEmail(email),
      status: 'active',
      source,
      fields: {},
      groupIds: [],
      ipAddress: null,
      createdAt: now,
      updatedAt: now,
      subscribedAt: now,
      unsubscribedAt: null,
      optedInAt: null,
      optinIp: null,
    };
    this.subscribers.set(subscriber.id, subscriber);
    this.subscriberIdByEmail.set(subscriber.email, subscriber.id);
    return subscriber;
  }

  deleteSubscriber(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber.id);
    this.subscriberIdByEmail.delete(subscriber.email);
  }

  createGroup(name: string, now: number): Group {
    const group: Group = { id: this.ids.next(now), name, createdAt: now };
    this.groups.set(group.id, group);
    return group;
  }

  deleteGroup(group: Group): void {
    this.groups.delete(group.id);
    for (const subscriber of this.subscribers.values()) {
      subscriber.groupIds = subscriber.groupIds.filter((id) => id !== group.id);
    }
  }

  /**
   * Merges known field keys into the subscriber (unknown keys are dropped, as MailerLite drops values for
   * fields the account does not have). Returns whether anything changed.
   */
  mergeFields(subscriber: Subscriber, fields: Record<string, unknown>): boolean {
    const known = new Set(this.fieldKeys);
    let changed = false;
    for (const [key, value] of Object.entries(fields)) {
      if (!known.has(key)) continue;
      const next: FieldValue = value === null || typeof value === 'number' ? value : String(value);
      if (subscriber.fields[key] !== next) {
        subscriber.fields[key] = next;
        changed = true;
      }
    }
    return changed;
  }

  /** Adds the subscriber to a group; returns whether it was not already a member. */
  addToGroup(subscriber: Subscriber, groupId: string): boolean {
    if (subscriber.groupIds.includes(groupId)) return false;
    subscriber.groupIds.push(groupId);
    return true;
  }

  subscriberJson(subscriber: Subscriber): Record<string, unknown> {
    const fields: Record<string, FieldValue> = {};
    for (const key of this.fieldKeys) fields[key] = subscriber.fields[key] ?? null;
    return {
      id: subscriber.id,
      email: subscriber.email,
      status: subscriber.status,
      source: subscriber.source,
      sent: 0,
      opens_count: 0,
      clicks_count: 0,
      open_rate: 0,
      click_rate: 0,
      ip_address: subscriber.ipAddress,
      subscribed_at: formatTimestamp(subscriber.subscribedAt),
      unsubscribed_at: formatTimestamp(subscriber.unsubscribedAt),
      created_at: formatTimestamp(subscriber.createdAt),
      updated_at: formatTimestamp(subscriber.updatedAt),
      fields,
      groups: subscriber.groupIds
        .map((id) => this.groups.get(id))
        .filter((group): group is Group => group !== undefined)
        .map((group) => this.groupJson(group)),
      opted_in_at: subscriber.optedInAt,
      optin_ip: subscriber.optinIp,
    };
  }

  groupJson(group: Group): Record<string, unknown> {
    const counts: Record<SubscriberStatus, number> = {
      active: 0,
      unsubscribed: 0,
      unconfirmed: 0,
      bounced: 0,
      junk: 0,
    };
    for (const subscriber of this.subscribers.values()) {
      if (subscriber.groupIds.includes(group.id)) counts[subscriber.status] += 1;
    }
    return {
      id: group.id,
      name: group.name,
      active_count: counts.active,
      sent_count: 0,
      opens_count: 0,
      open_rate: { float: 0, string: '0%' },
      clicks_count: 0,
      click_rate: { float: 0, string: '0%' },
      unsubscribed_count: counts.unsubscribed,
      unconfirmed_count: counts.unconfirmed,
      bounced_count: counts.bounced,
      junk_count: counts.junk,
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

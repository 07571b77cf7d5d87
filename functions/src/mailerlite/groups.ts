import type { SubscriptionType } from '../contract';
import type { Logger } from '../logs';
import type { MailerLiteClient, RequestOptions } from './client';
import { type FieldErrors, MailerLiteConfiguredGroupError, MailerLiteValidationError } from './errors';
import { REFUSED_GROUP_FIELD } from './meaning';

/** What MAILERLITE_GROUP_UPDATES and MAILERLITE_GROUP_CLUB hold: a group id, or a name to resolve. */
export type GroupConfig = Readonly<Record<SubscriptionType, string>>;

/** The param behind each type's group, named in messages an operator reads. */
export const GROUP_PARAMS: Readonly<Record<SubscriptionType, string>> = {
  updates: 'MAILERLITE_GROUP_UPDATES',
  club: 'MAILERLITE_GROUP_CLUB',
};

// MailerLite group ids are long decimal strings; anything else configured is a name.
const GROUP_ID = /^\d{1,30}$/;

interface Resolution {
  pending: Promise<string>;
  /** The id, once `pending` has settled with it. */
  id: string | null;
}

/** Resolved names per instance, keyed by account, kept until MailerLite refuses the id. */
const resolved = new Map<string, Resolution>();

export function clearGroupCache(): void {
  resolved.clear();
}

/**
 * A configured id as is; a name looked up (exactly: MailerLite's filter matches substrings) or created. Two
 * instances could create a missing group twice: production configures ids.
 */
export async function resolveGroupId(
  client: MailerLiteClient,
  config: GroupConfig,
  type: SubscriptionType,
  options?: RequestOptions,
): Promise<string> {
  const configured = config[type].trim();
  if (GROUP_ID.test(configured)) return configured;
  const key = cacheKey(client, configured);
  let entry = resolved.get(key);
  if (!entry) {
    const resolution: Resolution = { pending: findOrCreate(client, configured, options), id: null };
    resolved.set(key, resolution);
    resolution.pending.then(
      (id) => {
        resolution.id = id;
      },
      // A failed lookup is not cached; only this entry goes, not a later re-resolution's.
      () => {
        if (resolved.get(key) === resolution) resolved.delete(key);
      },
    );
    entry = resolution;
  }
  return entry.pending;
}

/**
 * The id after MailerLite refused a group as gone: a name resolved again (concurrent callers share it);
 * a configured id never replaced (MailerLiteConfiguredGroupError). The refused id back means final.
 */
export async function reResolveGroupId(
  client: MailerLiteClient,
  config: GroupConfig,
  refused: { type: SubscriptionType; id: string },
  options?: RequestOptions,
): Promise<string> {
  const configured = config[refused.type].trim();
  if (GROUP_ID.test(configured)) {
    throw new MailerLiteConfiguredGroupError(GROUP_PARAMS[refused.type], configured);
  }
  const key = cacheKey(client, configured);
  if (resolved.get(key)?.id === refused.id) resolved.delete(key);
  return resolveGroupId(client, config, refused.type, options);
}

/** One invocation's group ids: resolved at first use, and again once when MailerLite says one is gone. */
export class GroupHolder {
  private readonly ids: Partial<Record<SubscriptionType, string>> = {};
  /** Types resolved again: a second refusal is final, instead of a loop. */
  private readonly reResolved = new Set<SubscriptionType>();

  constructor(
    private readonly client: MailerLiteClient,
    private readonly config: GroupConfig,
    private readonly logger: Logger,
  ) {}

  /** The id of `type`'s group, resolved at its first use. */
  async id(type: SubscriptionType, options?: RequestOptions): Promise<string> {
    const id = this.ids[type] ?? (await resolveGroupId(this.client, this.config, type, options));
    this.ids[type] = id;
    return id;
  }

  /** The name resolved again, once per type; null when resending cannot help (the refusal is final). */
  async reResolve(type: SubscriptionType, options?: RequestOptions): Promise<string | null> {
    const refusedId = this.ids[type];
    if (refusedId === undefined || this.reResolved.has(type)) return null;
    const fresh = await reResolveGroupId(this.client, this.config, { type, id: refusedId }, options);
    this.reResolved.add(type);
    if (fresh === refusedId) return null;
    this.ids[type] = fresh;
    this.logger.warn('mailerlite.group_re_resolved', {
      subscription_type: type,
      refused_group_id: refusedId,
      group_id: fresh,
    });
    return fresh;
  }
}

/** The ids of `sent` a 422 refuses as gone (`errors: {"groups.0": [...]}`); other errors refuse none. */
function refusedGroupIds(errors: FieldErrors, sent: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const field of Object.keys(errors)) {
    const index = REFUSED_GROUP_FIELD.exec(field)?.[1];
    const id = index === undefined ? undefined : sent[Number(index)];
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
}

/** refusedGroupIds of an error thrown by an upsert; none for any other error. */
export function groupIdsRefusedBy(error: unknown, sent: readonly string[]): string[] {
  return error instanceof MailerLiteValidationError ? refusedGroupIds(error.errors, sent) : [];
}

function cacheKey(client: MailerLiteClient, name: string): string {
  return `${client.accountKey} ${name.toLowerCase()}`;
}

async function findOrCreate(
  client: MailerLiteClient,
  name: string,
  options?: RequestOptions,
): Promise<string> {
  const wanted = name.toLowerCase();
  const matches = (await client.findGroups(name, options)).filter(
    (group) => group.name.toLowerCase() === wanted,
  );
  // Several groups of the same name: the oldest (smallest id) is the one every instance picks.
  const existing = matches.sort((a, b) => compareIds(a.id, b.id))[0];
  if (existing) return existing.id;
  return (await client.createGroup(name, options)).id;
}

function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

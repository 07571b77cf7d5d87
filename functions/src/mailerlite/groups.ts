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

/**
 * Resolved names, shared by every call an instance serves: a warm instance asks MailerLite once per
 * name. Keyed by the client's account (base URL and a hash of the key), so two accounts never share one.
 * An entry stays until MailerLite refuses its id (the group was deleted): see reResolveGroupId.
 */
const resolved = new Map<string, Resolution>();

export function clearGroupCache(): void {
  resolved.clear();
}

/**
 * The group id for a subscription type. A configured id is used as is (no request); a name is looked
 * up (exact match, case-insensitive, since MailerLite's filter is a substring match) and created when
 * missing. Two instances creating the same missing group at once could make two; configure ids in
 * production to rule that out.
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
      // A failed lookup must not stay cached: the next call tries again. Only this entry is
      // removed, never one a later re-resolution put in its place.
      () => {
        if (resolved.get(key) === resolution) resolved.delete(key);
      },
    );
    entry = resolution;
  }
  return entry.pending;
}

/**
 * The id to use after MailerLite refused `refused.id` as the group of `refused.type` (it no longer exists:
 * deleted in MailerLite, or the account was reset). For a name, the cached resolution is dropped and
 * the name resolved again, which creates the group if it is gone. Calls that saw the same refusal at
 * the same time share that one lookup: only an entry still holding the refused id is dropped, so a
 * caller arriving after the re-resolution gets its result instead of starting another.
 *
 * A configured id is never replaced: MailerLiteConfiguredGroupError says which param to fix.
 * The answer can be `refusedId` itself (MailerLite still lists the group it refused); retrying with
 * it cannot help, and the caller should treat the refusal as final.
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

/**
 * The group ids one invocation sends to: each contact task holds one. A type's id is
 * resolved at its first use (resolveGroupId), and resolved again once when MailerLite refuses it as
 * nonexistent (the group was deleted): from then on the fresh id is used, and the change is logged
 * (`mailerlite.group_re_resolved`).
 */
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

  /**
   * After MailerLite refused `type`'s id in use as nonexistent: the name resolved again (found, or created
   * if it was deleted), and used from now on. Once per type: null, with no request, when it was resolved
   * again already, and null when MailerLite still lists the id it refused; either way resending cannot
   * help and the refusal is final. Throws what the client throws (the type may then be tried again), and
   * MailerLiteConfiguredGroupError for a configured id, which is never replaced.
   */
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

/**
 * The group ids a 422 to an upsert refuses as nonexistent (a `group_gone` answer, see ./meaning.ts):
 * `{"message": "...", "errors": {"groups.0": ["The selected groups.0 is invalid."]}}`.
 * `sent` is the `groups` array of that upsert; other errors (about the address, a field, `groups`
 * as a whole) refuse no id.
 */
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

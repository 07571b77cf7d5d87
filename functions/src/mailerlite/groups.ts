import type { SubscriptionType } from '../contract';
import type { Logger } from '../logs';
import type { MailerLiteClient, RequestOptions } from './client';
import { MailerLiteConfiguredGroupError, MailerLiteValidationError } from './errors';

/** What MAILERLITE_GROUP_UPDATES and MAILERLITE_GROUP_CLUB hold: a group id, or a name to resolve. */
export type GroupConfig = Readonly<Record<SubscriptionType, string>>;

// MailerLite group ids are long decimal strings; anything else configured is a name.
const GROUP_ID = /^\d{1,30}$/;

/** Names resolved per instance, keyed by account and name, kept until MailerLite refuses the id. */
const resolved = new Map<string, Promise<string>>();

export function clearGroupCache(): void {
  resolved.clear();
}

/**
 * One invocation's group ids. A configured id is used as is and never replaced (MailerLiteConfiguredGroupError
 * names the param to fix); a name is looked up (exactly: MailerLite's filter matches substrings) or created,
 * once per instance for concurrent callers too, and resolved again once when MailerLite says its id is gone.
 * Two instances could create a missing group twice: production configures ids.
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
    this.ids[type] ??= await this.resolve(type, options);
    return this.ids[type];
  }

  /** The name resolved again, once per type; null when resending cannot help (the refusal is final). */
  async reResolve(type: SubscriptionType, options?: RequestOptions): Promise<string | null> {
    const refusedId = this.ids[type];
    if (refusedId === undefined || this.reResolved.has(type)) return null;
    const configured = this.config[type].trim();
    if (GROUP_ID.test(configured))
      throw new MailerLiteConfiguredGroupError(`MAILERLITE_GROUP_${type.toUpperCase()}`, configured);
    // Dropped only while it still holds the refused id: another caller's fresh id is used as it is.
    const key = this.cacheKey(configured);
    const cached = resolved.get(key);
    if (cached && (await cached.catch(() => null)) === refusedId && resolved.get(key) === cached)
      resolved.delete(key);
    const fresh = await this.resolve(type, options);
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

  private async resolve(type: SubscriptionType, options: RequestOptions | undefined): Promise<string> {
    const configured = this.config[type].trim();
    if (GROUP_ID.test(configured)) return configured;
    const key = this.cacheKey(configured);
    const cached = resolved.get(key);
    if (cached) return cached;
    const pending = findOrCreate(this.client, configured, options);
    resolved.set(key, pending);
    // A failed lookup is not cached; only this entry goes, not a later re-resolution's.
    pending.catch(() => resolved.get(key) === pending && resolved.delete(key));
    return pending;
  }

  private cacheKey(name: string): string {
    return `${this.client.accountKey} ${name.toLowerCase()}`;
  }
}

/** The ids of `sent` an upsert's 422 refuses as gone (`errors: {"groups.0": [...]}`); none for other errors. */
export function groupIdsRefusedBy(error: unknown, sent: readonly string[]): string[] {
  if (!(error instanceof MailerLiteValidationError)) return [];
  const ids = new Set<string>();
  for (const field of Object.keys(error.errors)) {
    // Laravel's `groups.*` rule names the refused element by its index; any other field refuses none.
    const id = sent[Number(/^groups\.(\d+)$/.exec(field)?.[1])];
    if (id !== undefined) ids.add(id);
  }
  return [...ids];
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
  const existing = matches.sort((a, b) => a.id.length - b.id.length || a.id.localeCompare(b.id))[0];
  return existing?.id ?? (await client.createGroup(name, options)).id;
}

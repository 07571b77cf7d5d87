import type { SubscriptionType } from '../schemas';
import type { MailerLiteClient, RequestOptions } from './client';

/** What MAILERLITE_GROUP_UPDATES and MAILERLITE_GROUP_CLUB hold: a group id, or a name to resolve. */
export type GroupConfig = Readonly<Record<SubscriptionType, string>>;

// MailerLite group ids are long decimal strings; anything else configured is a name.
const GROUP_ID = /^\d{1,30}$/;

/**
 * Resolved names, shared by every call an instance serves: a warm instance asks MailerLite once per
 * name. Keyed by the client's account (base URL and a hash of the key), so two accounts never share one.
 */
const resolved = new Map<string, Promise<string>>();

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
  const key = `${client.accountKey} ${configured.toLowerCase()}`;
  let pending = resolved.get(key);
  if (!pending) {
    pending = findOrCreate(client, configured, options);
    resolved.set(key, pending);
    // A failed lookup must not stay cached: the next call tries again.
    pending.catch(() => resolved.delete(key));
  }
  return pending;
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

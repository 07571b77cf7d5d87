// MailerLite as the contact worker uses it, read through the functions' own client
// (functions/src/mailerlite/client.ts, single GET requests only): the key answers, each form's group exists, the
// `source` field exists as text (MailerLite silently drops values of fields the account lacks), and what the
// groups' counts say of the "double opt-in for API and integrations" setting. Reads only: GET /groups, GET /fields.

import { MailerLiteClient } from '../../functions/src/mailerlite/client.ts';
import {
  MailerLiteAuthError,
  MailerLiteError,
  MailerLiteNetworkError,
  MailerLiteRateLimitError,
  MailerLiteTimeoutError,
} from '../../functions/src/mailerlite/errors.ts';
import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

export interface MailerLiteSetup {
  baseUrl: string;
  apiKey: string | undefined;
  groups: { MAILERLITE_GROUP_UPDATES: string; MAILERLITE_GROUP_CLUB: string };
  /** A group named, not given by id, that does not exist yet: fine locally (the functions create it), not in production. */
  missingNamedGroupFails: boolean;
  /** The fix for an API that cannot be reached, when not the base URL (the local stack: start it). */
  unreachableFix?: string;
}

const GROUP_ID = /^\d{1,30}$/;
const MAX_PAGES = 50;

/** A group as GET /groups lists it; MailerLite counts its contacts by status. */
interface GroupView {
  id: unknown;
  name: unknown;
  active_count?: unknown;
  unconfirmed_count?: unknown;
}

/** Every page of a list, one GET a page, through the client (no retries past one rate-limit wait). */
async function getAll<T>(client: MailerLiteClient, path: string): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const { body } = await client.request<{ data?: T[]; meta?: { last_page?: unknown } }>(
      'GET',
      `${path}?limit=100&page=${page}`,
      undefined,
      { maxAttempts: 1, maxRateLimitWaits: 0 },
    );
    const data = Array.isArray(body?.data) ? body.data : [];
    items.push(...data);
    if (page >= Number(body?.meta?.last_page ?? page) || data.length === 0) break;
  }
  return items;
}

export const DOUBLE_OPT_IN =
  'MailerLite > Account settings > Subscribe settings > "Double opt-in for API and integrations"';
const DOUBLE_OPT_IN_MEANS =
  'when on, every contact the functions add stays unconfirmed until the child or parent clicks MailerLite\'s confirmation mail, and receives no campaign: "synced" (docs/spec) then means stored in MailerLite, not subscribed';

export async function checkMailerLite(setup: MailerLiteSetup): Promise<CheckResult[]> {
  const base = setup.baseUrl.replace(/\/+$/, '');
  if (!setup.apiKey) {
    return [
      fail(
        'MailerLite: key',
        'MAILERLITE_API_KEY is not set',
        'npx firebase functions:secrets:set MAILERLITE_API_KEY --project <id> (Integrations > MailerLite API)',
      ),
    ];
  }
  const client = new MailerLiteClient({ apiKey: setup.apiKey, baseUrl: base });
  let groups: GroupView[];
  try {
    groups = await getAll<GroupView>(client, '/groups');
  } catch (error) {
    if (error instanceof MailerLiteAuthError) {
      return [
        fail(
          'MailerLite: key',
          `${base} refuses MAILERLITE_API_KEY (${error.status}: ${error.message})`,
          'generate a token (Integrations > MailerLite API) and set it: npx firebase functions:secrets:set MAILERLITE_API_KEY --project <id>',
        ),
      ];
    }
    if (error instanceof MailerLiteRateLimitError) {
      return [
        cannotTell(
          'MailerLite: key',
          `${base} is rate-limiting this account (${error.message})`,
          'run it again in a minute',
        ),
      ];
    }
    if (
      setup.unreachableFix === undefined &&
      (error instanceof MailerLiteNetworkError || error instanceof MailerLiteTimeoutError)
    ) {
      // Not reached is not a wrong URL: the network may be what fails (the DNS checks above say whether it does).
      return [
        cannotTell(
          'MailerLite: key',
          `cannot reach ${base}: ${messageOf(error)}`,
          'run it where the network reaches MailerLite; if it does, check MAILERLITE_BASE_URL (default https://connect.mailerlite.com/api)',
        ),
      ];
    }
    return [
      fail(
        'MailerLite: key',
        `cannot read ${base}/groups: ${error instanceof MailerLiteError || error instanceof Error ? messageOf(error) : 'no answer'}`,
        setup.unreachableFix ?? 'check MAILERLITE_BASE_URL (default https://connect.mailerlite.com/api)',
      ),
    ];
  }
  const results: CheckResult[] = [pass('MailerLite: key', `${base} answers the key`)];
  const used: GroupView[] = [];

  for (const [param, configured] of Object.entries(setup.groups)) {
    const value = configured.trim();
    const name = `MailerLite: ${param}`;
    if (GROUP_ID.test(value)) {
      const group = groups.find((g) => String(g.id) === value);
      if (group) used.push(group);
      results.push(
        group
          ? pass(name, `group ${value} exists ("${String(group.name)}")`)
          : fail(
              name,
              `${value} is not a group of this account (it has ${groups.length})`,
              `set ${param} in functions/.env.<project id> to the id of the group (MailerLite > Subscribers > Groups)`,
            ),
      );
      continue;
    }
    const group = groups.find((g) => String(g.name).toLowerCase() === value.toLowerCase());
    if (group) used.push(group);
    if (group) {
      results.push(
        pass(name, `group "${value}" exists, id ${String(group.id)}; give ${param} that id in production`),
      );
    } else if (setup.missingNamedGroupFails) {
      results.push(
        fail(
          name,
          `no group named "${value}"`,
          `create the group in MailerLite and set ${param} to its id in functions/.env.<project id>`,
        ),
      );
    } else {
      results.push(pass(name, `no group "${value}" yet: the first sign-up of that form creates it`));
    }
  }

  results.push(doubleOptIn(used));

  try {
    const fields = await getAll<{ key?: unknown; type?: unknown }>(client, '/fields');
    const source = fields.find((field) => field.key === 'source');
    results.push(
      !source
        ? fail(
            'MailerLite: field source',
            'the account has no field with the key `source`, so every contact would lose the form it came from',
            'create a text custom field with the key `source` (Subscribers > Fields)',
          )
        : source.type === 'text'
          ? pass('MailerLite: field source', 'the account has the text field `source`')
          : fail(
              'MailerLite: field source',
              `the field \`source\` is of type ${String(source.type)}, not text: MailerLite refuses or drops "hero_form" and "join_club"`,
              'delete the field and create a text custom field with the key `source` (Subscribers > Fields)',
            ),
    );
  } catch (error) {
    results.push(
      cannotTell(
        'MailerLite: field source',
        `cannot read ${base}/fields: ${messageOf(error)}`,
        'run it again',
      ),
    );
  }
  results[0] = { ...results[0], detail: `${base} answers the key; ${rateLimit(client)}` } as CheckResult;
  return results;
}

/** What the used groups' counts say of double opt-in for the API: unconfirmed contacts and no active one. */
function doubleOptIn(groups: GroupView[]): CheckResult {
  const name = 'MailerLite: double opt-in';
  const counted = groups.filter(
    (group) => typeof group.active_count === 'number' && typeof group.unconfirmed_count === 'number',
  );
  const active = counted.reduce((sum, group) => sum + Number(group.active_count), 0);
  const unconfirmed = counted.reduce((sum, group) => sum + Number(group.unconfirmed_count), 0);
  if (counted.length > 0 && unconfirmed > 0 && active === 0) {
    return fail(
      name,
      `the groups hold ${unconfirmed} unconfirmed contact(s) and no active one: ${DOUBLE_OPT_IN} looks on; ${DOUBLE_OPT_IN_MEANS}`,
      `turn it off (${DOUBLE_OPT_IN}) unless the spec is changed to promise a confirmation mail`,
    );
  }
  return cannotTell(
    name,
    `the API does not say whether ${DOUBLE_OPT_IN} is on${counted.length > 0 ? ` (the groups hold ${active} active and ${unconfirmed} unconfirmed contacts)` : ''}; ${DOUBLE_OPT_IN_MEANS}`,
    'look at that setting: it should be off',
  );
}

function rateLimit(client: MailerLiteClient): string {
  const { limit, remaining } = client.rateLimit;
  return limit !== null || remaining !== null
    ? `rate limit ${limit ?? '?'} requests a minute, ${remaining ?? '?'} left now`
    : 'no rate-limit headers in its answer';
}

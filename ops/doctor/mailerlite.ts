// MailerLite as the contact worker uses it: the key answers, each form's group exists, the `source` field
// exists (MailerLite silently drops values of fields the account lacks). Reads only: GET /groups, GET /fields.

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

interface Page<T> {
  data?: T[];
  meta?: { last_page?: number };
}

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function getAll<T>(baseUrl: string, apiKey: string, path: string, seen: Headers[]): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const response = await fetch(`${baseUrl}${path}?limit=100&page=${page}`, {
      headers: { Authorization: `Bearer ${apiKey}`, Accept: 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    seen.push(response.headers);
    const text = await response.text();
    if (!response.ok) {
      let message = response.statusText;
      try {
        message = String((JSON.parse(text) as { message?: unknown }).message ?? message);
      } catch {
        // Not JSON: the status says enough.
      }
      throw new HttpFailure(response.status, `${response.status} ${message}`);
    }
    const body = JSON.parse(text) as Page<T>;
    items.push(...(body.data ?? []));
    if (page >= Number(body.meta?.last_page ?? page) || (body.data ?? []).length === 0) break;
  }
  return items;
}

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
  const headers: Headers[] = [];
  let groups: Array<{ id: unknown; name: unknown }>;
  try {
    groups = await getAll(base, setup.apiKey, '/groups', headers);
  } catch (error) {
    if (error instanceof HttpFailure && error.status === 401) {
      return [
        fail(
          'MailerLite: key',
          `${base} refuses MAILERLITE_API_KEY (${error.message})`,
          'generate a token (Integrations > MailerLite API) and set it: npx firebase functions:secrets:set MAILERLITE_API_KEY --project <id>',
        ),
      ];
    }
    if (error instanceof HttpFailure && error.status === 429) {
      return [
        cannotTell(
          'MailerLite: key',
          `${base} is rate-limiting this account (${error.message})`,
          'run it again in a minute',
        ),
      ];
    }
    return [
      fail(
        'MailerLite: key',
        `cannot read ${base}/groups: ${messageOf(error)}`,
        setup.unreachableFix ?? 'check MAILERLITE_BASE_URL (default https://connect.mailerlite.com/api)',
      ),
    ];
  }
  const results: CheckResult[] = [
    pass('MailerLite: key', `${base} answers the key; ${rateLimit(headers.at(-1))}`),
  ];

  for (const [param, configured] of Object.entries(setup.groups)) {
    const value = configured.trim();
    const name = `MailerLite: ${param}`;
    if (GROUP_ID.test(value)) {
      const group = groups.find((g) => String(g.id) === value);
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

  try {
    const fields = await getAll<{ key?: unknown; type?: unknown }>(base, setup.apiKey, '/fields', headers);
    const source = fields.find((field) => field.key === 'source');
    results.push(
      source
        ? pass(
            'MailerLite: field source',
            `the account has the field \`source\` (${String(source.type ?? 'text')})`,
          )
        : fail(
            'MailerLite: field source',
            'the account has no field with the key `source`, so every contact would lose the form it came from',
            'create a text custom field with the key `source` (Subscribers > Fields)',
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
  results[0] = {
    ...results[0],
    detail: `${base} answers the key; ${rateLimit(headers.at(-1))}`,
  } as CheckResult;
  return results;
}

function rateLimit(headers: Headers | undefined): string {
  const limit = headers?.get('x-ratelimit-limit');
  const remaining = headers?.get('x-ratelimit-remaining');
  return limit || remaining
    ? `rate limit ${limit ?? '?'} requests a minute, ${remaining ?? '?'} left now`
    : 'no rate-limit headers in its answer';
}

// The MailerLite harness of the functions' tests: the stand-in in stand-ins/mailerlite, started per test file on an
// ephemeral loopback port, and the real client pointed at it (with short waits, or recording what MailerLite
// confirmed).

import { expect } from 'vitest';
import {
  type MailerLiteStandIn,
  type MailerLiteStandInOptions,
  startMailerLiteStandIn,
} from '../../stand-ins/mailerlite/index.ts';
import {
  type BatchRequest,
  type BatchResponse,
  MailerLiteClient,
  type MailerLiteClientOptions,
  type MailerLiteMethod,
  type MailerLiteResponse,
  type RequestOptions,
} from '../src/mailerlite/client';

/** MailerLite as the launcher runs it: an account with a `source` custom field. */
export function startMailerLite(options: MailerLiteStandInOptions = {}): Promise<MailerLiteStandIn> {
  return startMailerLiteStandIn({ quiet: true, customFields: ['source'], ...options });
}

/** MailerLite's documented limits, which a test that changed them must get back. */
export const MAILERLITE_LIMITS = {
  windowMs: 60_000,
  requestsPerWindow: 120,
  importsPerWindow: 5,
  fractionalRetryAfter: false,
};

/** Clears the stand-in's data, faults and windows, and restores its documented limits. */
export function resetMailerLite(ml: MailerLiteStandIn): void {
  ml.reset();
  ml.setLimits(MAILERLITE_LIMITS);
}

/** Deletes a group the way an operator would: through MailerLite's API (DELETE /api/groups/{id}). */
export async function deleteGroupInMailerLite(ml: MailerLiteStandIn, id: string): Promise<void> {
  const response = await fetch(`${ml.baseUrl}/groups/${id}`, {
    method: 'DELETE',
    headers: { Authorization: `Bearer ${ml.apiKey}`, Accept: 'application/json' },
  });
  expect(response.status, 'DELETE /api/groups/{id}').toBe(204);
}

/** Empties the stand-in's account through its HTTP control (as the e2e suite does between tests). */
export async function resetMailerLiteOverHttp(ml: MailerLiteStandIn): Promise<void> {
  const response = await fetch(`${ml.url}/__control/reset`, { method: 'POST' });
  expect(response.ok, 'POST /__control/reset').toBe(true);
}

/** Group look-ups (GET /api/groups) and creations (POST /api/groups) in the stand-in's request log. */
export function groupRequests(ml: MailerLiteStandIn): { lookups: number; creations: number } {
  const requests = ml.state.requests;
  return {
    lookups: requests.filter((r) => r.method === 'GET' && r.path.split('?')[0] === '/api/groups').length,
    creations: requests.filter((r) => r.method === 'POST' && r.path === '/api/groups').length,
  };
}

/** Options for a client of the stand-in with short waits, so failure paths take milliseconds rather than seconds. */
function shortWaitOptions(
  ml: MailerLiteStandIn,
  options: Partial<MailerLiteClientOptions>,
): MailerLiteClientOptions {
  return {
    apiKey: ml.apiKey,
    baseUrl: ml.baseUrl,
    backoffBaseMs: 20,
    backoffMaxMs: 100,
    timeoutMs: 2_000,
    ...options,
  };
}

/** A client with short waits, so failure paths take milliseconds rather than seconds. */
export function mailerLiteClient(
  ml: MailerLiteStandIn,
  options: Partial<MailerLiteClientOptions> = {},
): MailerLiteClient {
  return new MailerLiteClient(shortWaitOptions(ml, options));
}

/** An upsert MailerLite confirmed (2xx), alone or inside a batch. */
export interface ConfirmedUpsert {
  email: string;
  groups: string[];
}

/**
 * The real client, sending real requests, that also writes down every upsert MailerLite confirmed:
 * what the stand-in's request log cannot show (the addresses and groups inside a batch).
 */
export class RecordingMailerLiteClient extends MailerLiteClient {
  constructor(
    options: MailerLiteClientOptions,
    readonly confirmed: ConfirmedUpsert[],
  ) {
    super(options);
  }

  override async request<T>(
    method: MailerLiteMethod,
    path: string,
    body?: unknown,
    options?: RequestOptions,
  ): Promise<MailerLiteResponse<T>> {
    const response = await super.request<T>(method, path, body, options);
    const upsert = (value: unknown) => {
      const { email, groups } = value as { email: string; groups?: string[] };
      this.confirmed.push({ email, groups: groups ?? [] });
    };
    if (method === 'POST' && path === '/subscribers') upsert(body);
    if (method === 'POST' && path === '/batch') {
      const { requests } = body as { requests: BatchRequest[] };
      const { responses } = response.body as { responses: BatchResponse[] };
      responses.forEach((entry, index) => {
        if (entry.code < 300 && requests[index]?.path === 'api/subscribers') upsert(requests[index]?.body);
      });
    }
    return response;
  }
}

export function recordingMailerLiteClient(
  ml: MailerLiteStandIn,
  confirmed: ConfirmedUpsert[],
  options: Partial<MailerLiteClientOptions> = {},
): RecordingMailerLiteClient {
  return new RecordingMailerLiteClient(shortWaitOptions(ml, options), confirmed);
}

/** Confirmed upserts that brought MailerLite nothing new: every (address, group) in them was confirmed before. */
export function repeatedUpserts(confirmed: ConfirmedUpsert[]): number {
  const seen = new Set<string>();
  let repeated = 0;
  for (const { email, groups } of confirmed) {
    const pairs = groups.map((group) => `${group} ${email}`);
    if (pairs.every((p) => seen.has(p))) repeated += 1;
    for (const p of pairs) seen.add(p);
  }
  return repeated;
}

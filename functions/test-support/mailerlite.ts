// The MailerLite harness of the functions' tests: the stand-in in stand-ins/mailerlite, started per test file on an
// ephemeral loopback port, and the real client pointed at it (with short waits).

import type { Firestore } from 'firebase-admin/firestore';
import { expect } from 'vitest';
import {
  type MailerLiteStandIn,
  type MailerLiteStandInOptions,
  startMailerLiteStandIn,
} from '../../stand-ins/mailerlite/index.ts';
import { systemClock } from '../src/clock';
import type { DeliverContactDeps } from '../src/delivery/deliver-contact';
import type { Logger } from '../src/logs';
import { MailerLiteClient, type MailerLiteClientOptions } from '../src/mailerlite/client';
import { testMailboxes } from './signups';

/** MailerLite as the launcher runs it: an account with a `source` custom field. */
export function startMailerLite(options: MailerLiteStandInOptions = {}): Promise<MailerLiteStandIn> {
  return startMailerLiteStandIn({ quiet: true, customFields: ['source'], ...options });
}

/** The launcher's two MailerLite groups (MAILERLITE_GROUP_UPDATES, MAILERLITE_GROUP_CLUB). */
export const GROUPS = { updates: 'GOODY launch updates', club: 'GOODY Club' };

/** MailerLite's documented limits, which a test that changed them must get back. */
export const MAILERLITE_LIMITS = {
  windowMs: 60_000,
  requestsPerWindow: 120,
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

/** The contact worker's deps (delivery/deliver-contact.ts) against the stand-in, with a short-wait client. */
export function contactWorkerDeps(
  bed: { db: Firestore; ml: MailerLiteStandIn; logger: Logger },
  client: Partial<MailerLiteClientOptions> = {},
  extra: Partial<DeliverContactDeps> = {},
): DeliverContactDeps {
  return {
    db: bed.db,
    client: mailerLiteClient(bed.ml, client),
    groups: GROUPS,
    clock: systemClock,
    logger: bed.logger,
    mailboxes: testMailboxes(bed.db),
    ...extra,
  };
}

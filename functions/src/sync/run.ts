import type { FieldPath, Firestore, Query, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { emailFields, type Logger } from '../logs';
import {
  BATCH_MAX_REQUESTS,
  type BatchRequest,
  fieldErrors,
  type MailerLiteClient,
  mailerLiteTime,
  type RequestOptions,
  type UpsertSubscriberInput,
} from '../mailerlite/client';
import {
  type FieldErrors,
  MailerLiteAuthError,
  MailerLiteConfiguredGroupError,
  MailerLiteError,
  MailerLiteNotFoundError,
  MailerLiteRateLimitError,
  MailerLiteTimeoutError,
  MailerLiteValidationError,
} from '../mailerlite/errors';
import { groupIdsRefusedBy, refusedGroupIds } from '../mailerlite/groups';
import { erasedSince, millisOf } from '../privacy/erasure';
import { parseStoredSignup, type Source, type StoredSignup, type SubscriptionType } from '../schemas';
import { LeaseLostError, type SyncCursor, type SyncState } from './state';

export const SIGNUPS = 'email_subscriptions';

export interface SyncOptions {
  /** Sign-ups read from Firestore per query. */
  pageSize: number;
  /** How long the lease lasts without renewal; a crashed run blocks the next one at most this long. */
  leaseMs: number;
  /** Single upserts sent at once while the import limit holds batches back. */
  singleConcurrency: number;
  /**
   * Requests of the global budget kept back for batches while the import limit holds them: MailerLite's
   * import limit (5 a minute). Spending them on single upserts would cost 49 contacts each.
   */
  importReserve: number;
  /** Times one contact may fail transiently (inside batches) before the run gives up on MailerLite. */
  maxContactFailures: number;
}

export const DEFAULT_SYNC_OPTIONS: SyncOptions = {
  pageSize: 500,
  // Longer than the longest single wait (a Retry-After of at most a minute, or one request's
  // timeout), and renewed at a third of it, so a live run never loses its lease while waiting.
  leaseMs: 3 * 60_000,
  singleConcurrency: 8,
  importReserve: 5,
  maxContactFailures: 5,
};

export type SyncProgressEvent =
  | { type: 'batch'; confirmed: number; rejected: number; retry: number }
  | { type: 'single'; confirmed: number; rejected: number; retry: number }
  | { type: 'checkpoint'; synced: number };

export type SyncFailure =
  | 'mailerlite_unavailable'
  | 'mailerlite_auth'
  | 'mailerlite_config'
  | 'lease_lost'
  | 'database';

export type SyncStop =
  | { kind: 'done' }
  | { kind: 'deadline' }
  /** `detail`: what to tell the operator instead of the reason's general message. */
  | { kind: 'failed'; reason: SyncFailure; detail?: string };

export interface SyncRunDeps {
  db: Firestore;
  documentId: FieldPath;
  client: MailerLiteClient;
  groupIds: Readonly<Record<SubscriptionType, string>>;
  /**
   * The group id to use for `type` after MailerLite refused `refusedId` as nonexistent (see
   * reResolveGroupId); throws MailerLiteConfiguredGroupError for an id the operator configured.
   */
  reResolveGroup: (type: SubscriptionType, refusedId: string, options: RequestOptions) => Promise<string>;
  state: SyncState;
  clock: Clock;
  logger: Logger;
  /** Clock ms after which no request starts and no wait lasts. */
  stopAt: number;
  options: SyncOptions;
  onProgress?: (event: SyncProgressEvent) => void | Promise<void>;
}

/** A sign-up read from Firestore: its place in the order, and what it asks for (null: not a sign-up). */
interface ReadSignup {
  cursor: SyncCursor;
  signup: StoredSignup | null;
}

/** One address in a step, with every group its sign-ups in that step ask for. */
interface Contact {
  email: string;
  types: Set<SubscriptionType>;
  /** The source of its latest sign-up in the step: MailerLite keeps one value per field. */
  source: Source;
  /** Its first sign-up in the step (ms): sent as MailerLite's consent time, opted_in_at. */
  optedInAt: number;
  /** Its latest sign-up in the step (ms): an erasure at or after it erased every one of them. */
  signedUpAt: number;
}

type Outcome = 'confirmed' | 'rejected' | 'retry';
/** What one upsert's answer means for its contact, before the run has acted on it. */
type Answer = Outcome | 'auth' | 'config' | { refusedGroups: string[] };

const LOW_WATER = 200;
const RATE_LIMIT_SLACK_MS = 50;

/**
 * One run of the sync. It reads sign-ups after the cursor in (created_at, id) order and works in
 * steps: a step takes the sign-ups right after the cursor, up to 50 distinct addresses (8 for a wave
 * of single upserts), folds them into one upsert per address carrying every group asked for, sends
 * them, and moves the cursor over every sign-up MailerLite has settled (confirmed, or refused as an
 * invalid address) before starting the next step. Within a run, an (address, group) pair MailerLite
 * has confirmed is never sent again, so duplicates cost nothing; a crash repeats at most the step
 * that was in flight.
 *
 * Pacing follows MailerLite's two limits, read from its answers: batches of 50 upserts while the
 * import limit (5 a minute) has room; while it has not, single upserts with the global budget (120
 * a minute, as X-RateLimit-Remaining reports it) down to the 5 requests the batches need when the
 * import limit reopens; and a wait of exactly Retry-After when a budget is spent. That is the most
 * contacts the limits let through: 5 x 50 + (120 - 5) x 1 = 365 a minute.
 */
export class SyncRun {
  /** Distinct addresses MailerLite confirmed in this run. */
  readonly syncedEmails = new Set<string>();
  rejected = 0;
  skipped = 0;
  read = 0;
  /** Contacts not sent, or forgotten again, because the person unsubscribed while the run held them. */
  erased = 0;

  private readonly signups: ReadSignup[] = [];
  /** Index in `signups` of the first sign-up not yet settled: the cursor sits just before it. */
  private frontier = 0;
  private readonly confirmedPairs = new Set<string>();
  private readonly rejectedEmails = new Set<string>();
  /** Per address erased during the run: its sign-ups created up to this time (ms) are gone. */
  private readonly erasedUpTo = new Map<string, number>();
  /** Contacts MailerLite confirmed in the step being sent. */
  private confirmedInStep: Contact[] = [];
  private readonly failures = new Map<string, number>();
  private lastRead: SyncCursor | null;
  private exhausted = false;
  private cursor: SyncCursor | null;
  private cursorDirty = false;
  private failure: SyncFailure | null = null;
  private failureDetail: string | undefined;
  /** The group ids in use; a type's id changes when its group had to be resolved again. */
  private readonly groupIds: Record<SubscriptionType, string>;
  /** Types whose group MailerLite refused in the last step, with the id it refused. */
  private readonly refusedGroups = new Map<SubscriptionType, string>();
  /** Types resolved again in this run: a second refusal stops the run instead of looping. */
  private readonly reResolved = new Set<SubscriptionType>();
  private globalBlockedUntil = 0;
  private importBlockedUntil = 0;

  constructor(
    private readonly deps: SyncRunDeps,
    start: SyncCursor | null,
  ) {
    this.lastRead = start;
    this.cursor = start;
    this.groupIds = { ...deps.groupIds };
  }

  /** Sign-ups read but not yet passed by the cursor (the next run reads them again). */
  get unsettledRead(): number {
    return this.signups.length - this.frontier;
  }

  async execute(): Promise<SyncStop> {
    const { clock, stopAt } = this.deps;
    let stop: SyncStop = { kind: 'done' };
    while (!this.failure) {
      if (clock.now() >= stopAt) {
        stop = { kind: 'deadline' };
        break;
      }
      await this.refill();
      this.advanceCursor();
      if (this.failure) break;
      if (this.frontier === this.signups.length) {
        if (this.exhausted) break;
        continue;
      }
      const now = clock.now();
      if (now < this.globalBlockedUntil) {
        await this.waitUntil(this.globalBlockedUntil);
        continue;
      }
      if (this.refusedGroups.size > 0) {
        await this.reResolveRefusedGroups();
        continue;
      }
      const importOpen = now >= this.importBlockedUntil;
      const contacts = await this.withoutErased(
        this.nextStep(importOpen ? BATCH_MAX_REQUESTS : this.deps.options.singleConcurrency),
      );
      if (this.failure) break;
      if (contacts.length === 0) {
        this.advanceCursor();
        await this.checkpoint(false);
        continue;
      }
      this.confirmedInStep = [];
      if (importOpen && contacts.length >= 2) {
        await this.sendBatch(contacts);
      } else {
        // While batches wait for the import limit, singles may spend the global budget down to what
        // the batches will need once it reopens (when there is enough work for a batch at all).
        const reserve = !importOpen && contacts.length >= 2 ? this.deps.options.importReserve : 0;
        // A count seen before the global window last reset says nothing about the new one.
        const seen = this.deps.client.rateLimit;
        const remaining = seen.observedAt < this.globalBlockedUntil ? null : seen.remaining;
        const room = remaining === null ? this.deps.options.singleConcurrency : remaining - reserve;
        if (reserve > 0 && room <= 0) {
          await this.waitUntil(this.importBlockedUntil);
          continue;
        }
        await this.sendWave(
          contacts.slice(0, Math.max(1, Math.min(this.deps.options.singleConcurrency, room))),
        );
      }
      await this.forgetErased(this.confirmedInStep);
      this.advanceCursor();
      await this.checkpoint(false);
    }
    if (this.failure !== 'lease_lost') await this.checkpoint(true);
    if (!this.failure) return stop;
    return this.failureDetail === undefined
      ? { kind: 'failed', reason: this.failure }
      : { kind: 'failed', reason: this.failure, detail: this.failureDetail };
  }

  /** How many sign-ups lie after the cursor, counted by Firestore; null if it cannot say. */
  async remainingAfterCursor(): Promise<number | null> {
    try {
      const result = await this.afterCursor(this.cursor).count().get();
      return result.data().count;
    } catch {
      return null;
    }
  }

  private afterCursor(cursor: SyncCursor | null): Query {
    let query = this.deps.db.collection(SIGNUPS).orderBy('created_at').orderBy(this.deps.documentId);
    if (cursor) query = query.startAfter(cursor.created_at, cursor.id);
    return query;
  }

  private async refill(): Promise<void> {
    // Read ahead far enough for a full batch: past runs of duplicates, which need no request.
    while (
      !this.exhausted &&
      !this.failure &&
      (this.signups.length - this.frontier < LOW_WATER ||
        this.nextStep(BATCH_MAX_REQUESTS).length < BATCH_MAX_REQUESTS)
    ) {
      let docs: QueryDocumentSnapshot[];
      try {
        docs = (await this.afterCursor(this.lastRead).limit(this.deps.options.pageSize).get()).docs;
      } catch {
        this.fail('database');
        return;
      }
      for (const doc of docs) this.accept(doc);
      if (docs.length < this.deps.options.pageSize) this.exhausted = true;
    }
  }

  private accept(doc: QueryDocumentSnapshot): void {
    this.read += 1;
    const cursor: SyncCursor = { created_at: doc.get('created_at'), id: doc.id };
    this.lastRead = cursor;
    const signup = parseStoredSignup(doc.data());
    if (!signup) {
      // Not something the rules let a client write: nothing to deliver, and no address to log.
      this.skipped += 1;
      this.deps.logger.warn('sync.signup_skipped', { doc_id: doc.id });
    }
    this.signups.push({ cursor, signup });
  }

  private settled({ signup, cursor }: ReadSignup): boolean {
    return (
      signup === null ||
      this.rejectedEmails.has(signup.email) ||
      this.confirmedPairs.has(pair(signup.email, signup.subscriptionType)) ||
      millisOf(cursor.created_at) <= (this.erasedUpTo.get(signup.email) ?? Number.NEGATIVE_INFINITY)
    );
  }

  /**
   * The contacts whose person has not unsubscribed since their sign-ups were read. The others are
   * settled without a request: their sign-ups are already deleted, and pushing them would put an
   * erased address back into MailerLite.
   */
  private async withoutErased(contacts: Contact[]): Promise<Contact[]> {
    let erased: Set<string>;
    try {
      erased = await erasedSince(this.deps.db, contacts);
    } catch {
      this.fail('database');
      return [];
    }
    if (erased.size === 0) return contacts;
    for (const contact of contacts) {
      if (!erased.has(contact.email)) continue;
      this.erasedUpTo.set(contact.email, contact.signedUpAt);
      this.erased += 1;
      this.deps.logger.info('sync.erased_contact_skipped', emailFields(contact.email));
    }
    return contacts.filter((contact) => !erased.has(contact.email));
  }

  /**
   * After a step: a person who unsubscribed while MailerLite was taking their address (after the check
   * above) has just been put back. The erasure writes its tombstone before it forgets the subscriber,
   * so either it forgot after our push, or the tombstone is visible here and the run forgets it again.
   */
  private async forgetErased(confirmed: Contact[]): Promise<void> {
    if (confirmed.length === 0 || this.failure === 'lease_lost') return;
    let erased: Set<string>;
    try {
      erased = await erasedSince(this.deps.db, confirmed);
    } catch {
      this.fail('database');
      return;
    }
    for (const contact of confirmed) {
      if (!erased.has(contact.email)) continue;
      try {
        await this.deps.client.forgetSubscriber(contact.email, { deadline: this.deps.stopAt });
      } catch (error) {
        this.deps.logger.error('sync.failed', { reason: 'forget_erased', ...emailFields(contact.email) });
        this.requestFailed(error);
        continue;
      }
      this.erasedUpTo.set(contact.email, contact.signedUpAt);
      this.syncedEmails.delete(contact.email);
      this.erased += 1;
      this.deps.logger.warn('sync.erased_contact_forgotten', emailFields(contact.email));
    }
  }

  /**
   * The contacts of the next step: the unsettled sign-ups right after the cursor, folded by address,
   * up to `max` addresses.
   */
  private nextStep(max: number): Contact[] {
    const contacts = new Map<string, Contact>();
    for (let index = this.frontier; index < this.signups.length; index += 1) {
      const entry = this.signups[index] as ReadSignup;
      const { signup } = entry;
      if (signup === null || this.settled(entry)) continue;
      const createdAt = millisOf(entry.cursor.created_at);
      let contact = contacts.get(signup.email);
      if (!contact) {
        if (contacts.size === max) break;
        contact = {
          email: signup.email,
          types: new Set(),
          source: signup.source,
          optedInAt: createdAt,
          signedUpAt: createdAt,
        };
        contacts.set(signup.email, contact);
      }
      contact.types.add(signup.subscriptionType);
      contact.source = signup.source;
      contact.optedInAt = Math.min(contact.optedInAt, createdAt);
      contact.signedUpAt = Math.max(contact.signedUpAt, createdAt);
    }
    return [...contacts.values()];
  }

  private upsert(contact: Contact): UpsertSubscriberInput {
    return {
      email: contact.email,
      fields: { source: contact.source },
      groups: [...contact.types].map((type) => this.groupIds[type]),
      ...(contact.optedInAt > 0 ? { opted_in_at: mailerLiteTime(contact.optedInAt) } : {}),
    };
  }

  private requestOptions() {
    // 429s come back to the run (maxRateLimitWaits: 0): it paces all its requests, not just one.
    return { deadline: this.deps.stopAt, maxRateLimitWaits: 0 };
  }

  private async sendBatch(contacts: Contact[]): Promise<void> {
    const upserts = contacts.map((contact) => this.upsert(contact));
    const requests: BatchRequest[] = upserts.map((body) => ({
      method: 'POST',
      path: 'api/subscribers',
      body,
    }));
    let responses: Awaited<ReturnType<MailerLiteClient['batch']>>;
    try {
      responses = await this.deps.client.batch(requests, this.requestOptions());
    } catch (error) {
      this.requestFailed(error);
      return;
    }
    const outcomes = responses.map((response, index) =>
      this.settle(
        contacts[index] as Contact,
        classify(response.code, response.body, upserts[index]?.groups ?? []),
      ),
    );
    await this.stepDone('batch', outcomes);
  }

  /** Single upserts, several at once, spending what the global budget has left. */
  private async sendWave(contacts: Contact[]): Promise<void> {
    const outcomes = await Promise.all(
      contacts.map(async (contact): Promise<Outcome> => {
        const upsert = this.upsert(contact);
        try {
          await this.deps.client.upsertSubscriber(upsert, this.requestOptions());
          return this.settle(contact, 'confirmed');
        } catch (error) {
          const refusedGroups = groupIdsRefusedBy(error, upsert.groups ?? []);
          if (refusedGroups.length > 0) return this.settle(contact, { refusedGroups });
          if (error instanceof MailerLiteValidationError && emailOnly(error.errors)) {
            return this.settle(contact, 'rejected');
          }
          this.requestFailed(error);
          return 'retry';
        }
      }),
    );
    await this.stepDone('single', outcomes);
  }

  private settle(contact: Contact, outcome: Answer): Outcome {
    if (typeof outcome === 'object') {
      // Not applied (MailerLite validates before it writes): the contact stays unsettled and goes
      // again, with the group resolved anew, in the step after the re-resolution. Not counted as a
      // failure of the contact: the refusal is about the group, and it is retried once per run.
      let ours = false;
      for (const [type, id] of Object.entries(this.groupIds) as Array<[SubscriptionType, string]>) {
        if (!outcome.refusedGroups.includes(id)) continue;
        this.refusedGroups.set(type, id);
        ours = true;
      }
      // An id this run never sent cannot be resolved again; resending would loop.
      if (!ours) this.fail('mailerlite_config');
      return 'retry';
    }
    if (outcome === 'confirmed') {
      for (const type of contact.types) this.confirmedPairs.add(pair(contact.email, type));
      this.syncedEmails.add(contact.email);
      this.confirmedInStep.push(contact);
      return 'confirmed';
    }
    if (outcome === 'rejected') {
      this.rejectedEmails.add(contact.email);
      this.rejected += 1;
      this.deps.logger.warn('sync.contact_rejected', emailFields(contact.email));
      return 'rejected';
    }
    if (outcome === 'auth') this.fail('mailerlite_auth');
    else if (outcome === 'config') this.fail('mailerlite_config');
    else {
      const failures = (this.failures.get(contact.email) ?? 0) + 1;
      this.failures.set(contact.email, failures);
      if (failures >= this.deps.options.maxContactFailures) this.fail('mailerlite_unavailable');
    }
    return 'retry';
  }

  private async stepDone(type: 'batch' | 'single', outcomes: Outcome[]): Promise<void> {
    const counts = {
      confirmed: outcomes.filter((outcome) => outcome === 'confirmed').length,
      rejected: outcomes.filter((outcome) => outcome === 'rejected').length,
      retry: outcomes.filter((outcome) => outcome === 'retry').length,
    };
    if (type === 'batch') this.deps.logger.info('sync.batch_confirmed', counts);
    await this.deps.onProgress?.({ type, ...counts });
  }

  /** What a request that failed as a whole means for the run; its contacts stay unsettled. */
  private requestFailed(error: unknown): void {
    const now = this.deps.clock.now();
    if (error instanceof MailerLiteRateLimitError) {
      const until = now + (error.retryAfterMs ?? 1_000) + RATE_LIMIT_SLACK_MS;
      if (error.importLimited) {
        this.importBlockedUntil = Math.max(this.importBlockedUntil, until);
      } else {
        this.globalBlockedUntil = Math.max(this.globalBlockedUntil, until);
        this.deps.logger.info('sync.rate_limited', { wait_ms: until - now });
      }
      return;
    }
    if (error instanceof MailerLiteTimeoutError && now >= this.deps.stopAt - 1_000) return; // cut by the deadline
    if (error instanceof MailerLiteAuthError) this.fail('mailerlite_auth');
    else if (error instanceof MailerLiteValidationError || error instanceof MailerLiteNotFoundError) {
      this.fail('mailerlite_config');
    } else if (error instanceof MailerLiteError) this.fail('mailerlite_unavailable');
    else throw error;
  }

  private fail(reason: SyncFailure, detail?: string): void {
    if (this.failure) return;
    this.failure = reason;
    this.failureDetail = detail;
  }

  /**
   * Between two steps, after MailerLite refused a group id as nonexistent: each refused type's group
   * is resolved again (found, or created if it was deleted) and the refused contacts, still unsettled
   * behind the cursor, go again in the next step with the new id. Once per type per run: a second
   * refusal, an id MailerLite still lists, or an id the operator configured stops the run, and the
   * cursor stays before every contact not delivered.
   */
  private async reResolveRefusedGroups(): Promise<void> {
    const { clock, options, stopAt } = this.deps;
    // The lookup and the creation wait out 429s: renew the lease first, and give them at most half
    // of it, so the lease cannot run out under them.
    await this.checkpoint(true);
    if (this.failure) return;
    const deadline = Math.min(stopAt, clock.now() + options.leaseMs / 2);
    for (const [type, refusedId] of this.refusedGroups) {
      if (this.reResolved.has(type)) {
        this.fail('mailerlite_config');
        return;
      }
      let fresh: string;
      try {
        fresh = await this.deps.reResolveGroup(type, refusedId, { deadline });
      } catch (error) {
        // A 429 leaves the refusal recorded, to be resolved again once the wait is over; the
        // deadline ends the run with the refused contacts still before the cursor.
        if (error instanceof MailerLiteConfiguredGroupError) this.fail('mailerlite_config', error.message);
        else if (error instanceof MailerLiteTimeoutError && clock.now() >= stopAt - 1_000) {
          await this.waitUntil(stopAt);
        } else this.requestFailed(error);
        return;
      }
      this.reResolved.add(type);
      this.refusedGroups.delete(type);
      if (fresh === refusedId) {
        this.fail('mailerlite_config');
        return;
      }
      this.groupIds[type] = fresh;
      this.deps.logger.warn('mailerlite.group_re_resolved', {
        subscription_type: type,
        refused_group_id: refusedId,
        group_id: fresh,
      });
    }
  }

  private async waitUntil(until: number): Promise<void> {
    const { clock, state, options } = this.deps;
    const target = Math.min(until, this.deps.stopAt);
    // Renew the lease first if the wait would take it close to expiring.
    if (target - state.leaseRenewedAt > options.leaseMs / 3) await this.checkpoint(true);
    const ms = target - clock.now();
    if (ms > 0 && !this.failure) await clock.sleep(ms);
  }

  /** Moves the cursor over every settled sign-up, up to the first that is not. */
  private advanceCursor(): void {
    let index = this.frontier;
    while (index < this.signups.length && this.settled(this.signups[index] as ReadSignup)) index += 1;
    if (index === this.frontier) return;
    this.cursor = (this.signups[index - 1] as ReadSignup).cursor;
    this.cursorDirty = true;
    this.frontier = index;
    if (this.frontier > 5_000) {
      this.signups.splice(0, this.frontier);
      this.frontier = 0;
    }
  }

  /** Writes the cursor when it moved, and renews the lease when a third of it has passed. */
  private async checkpoint(force: boolean): Promise<void> {
    if (this.failure === 'lease_lost') return;
    const { clock, state, options } = this.deps;
    const due = force || this.cursorDirty || clock.now() - state.leaseRenewedAt >= options.leaseMs / 3;
    if (!due) return;
    try {
      await state.checkpoint(this.cursorDirty && this.cursor ? this.cursor : undefined);
      this.cursorDirty = false;
    } catch (error) {
      this.fail(error instanceof LeaseLostError ? 'lease_lost' : 'database');
      return;
    }
    await this.deps.onProgress?.({ type: 'checkpoint', synced: this.syncedEmails.size });
  }
}

function pair(email: string, type: SubscriptionType): string {
  return `${type} ${email}`;
}

/** What one answer inside a batch means for its contact. */
function classify(code: number, body: unknown, groups: readonly string[]): Answer {
  if (code >= 200 && code < 300) return 'confirmed';
  if (code === 422) {
    const errors = fieldErrors(body);
    const refusedGroups = refusedGroupIds(errors, groups);
    if (refusedGroups.length > 0) return { refusedGroups };
    return emailOnly(errors) ? 'rejected' : 'config';
  }
  if (code === 401) return 'auth';
  if (code === 408 || code === 429 || code >= 500) return 'retry';
  return 'config';
}

/**
 * A 422 about the address alone: MailerLite will never take this contact, so it is counted and
 * passed. A 422 about anything else (a group, a field) is our configuration, and passing it would
 * lose contacts: the run stops instead.
 */
function emailOnly(errors: FieldErrors): boolean {
  const fields = Object.keys(errors);
  return fields.length > 0 && fields.every((field) => field === 'email');
}

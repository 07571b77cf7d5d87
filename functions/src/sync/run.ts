import { randomUUID } from 'node:crypto';
import type { FieldPath, Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { LeaseLostError } from '../lease';
import { emailFields, type Logger } from '../logs';
import { BATCH_MAX_REQUESTS, type MailerLiteClient } from '../mailerlite/client';
import type { Spelling } from '../mailerlite/contacts';
import {
  MailerLiteConfiguredGroupError,
  MailerLiteError,
  MailerLiteTimeoutError,
} from '../mailerlite/errors';
import { type GroupConfig, reResolveGroupId, resolveGroupId } from '../mailerlite/groups';
import { classify, failureOf, type MailerLiteStop } from '../mailerlite/meaning';
import type { Mailboxes } from '../privacy/mailboxes';
import type { ForgetOutcome } from '../privacy/suppression';
import type { SubscriptionType } from '../schemas';
import { Pacing } from './pacing';
import { Backlog, type Contact } from './pages';
import { type Answer, type RequestFailure, sendStep } from './send';
import { acquireSyncState, type SyncCursor, type SyncState } from './state';

/**
 * One run of the sync, top-down. It claims the lease (./state.ts), resolves the groups, then works
 * in steps until every sign-up after the cursor is settled, the deadline comes or MailerLite or
 * Firestore fails. A step takes the unsettled sign-ups right after the cursor, folded into one
 * contact per address (./pages.ts), as many as the rate limits let through now (./pacing.ts),
 * sends them (./send.ts), and moves the cursor over every sign-up MailerLite has settled (confirmed,
 * or refused as an invalid address) before the next step. Within a run, an (address, group) pair
 * MailerLite has confirmed is never sent again, so duplicates cost nothing; a crash repeats at most
 * the step that was in flight.
 *
 * The outside world (Firestore, the MailerLite client, the clock, the logger) comes in through
 * `deps`; everything else is a plain import.
 */

export interface SyncOptions {
  /** Sign-ups read from Firestore per query. */
  pageSize: number;
  /** How long the lease lasts without renewal; a crashed run blocks the next one at most this long. */
  leaseMs: number;
  /** Single upserts sent at once while the import limit holds batches back. */
  singleConcurrency: number;
  /** Requests of the global budget kept back for batches while the import limit holds them. */
  importReserve: number;
  /** Times one contact may fail transiently (inside batches) before the run gives up on MailerLite. */
  maxContactFailures: number;
  /** How long after a run ended (but at its deadline) the next may start. */
  minIntervalMs: number;
}

export const DEFAULT_SYNC_OPTIONS: SyncOptions = {
  pageSize: 500,
  // Longer than the longest single wait (a Retry-After of at most a minute, or one request's
  // timeout), and renewed at a third of it, so a live run never loses its lease while waiting.
  leaseMs: 3 * 60_000,
  singleConcurrency: 8,
  importReserve: 5,
  maxContactFailures: 5,
  minIntervalMs: 60_000,
};

export type SyncProgressEvent =
  | { type: 'batch'; confirmed: number; rejected: number; retry: number }
  | { type: 'single'; confirmed: number; rejected: number; retry: number }
  | { type: 'checkpoint'; synced: number };

/** How a run stopped short: MailerLite failed it (mailerlite/meaning.ts, failureOf), or the database did. */
export type SyncFailure = MailerLiteStop | 'lease_lost' | 'database';

export type SyncStop =
  | { kind: 'done' }
  | { kind: 'deadline' }
  /** `detail`: what an operator must fix, for the logs (the reply gives the reason's general message). */
  | { kind: 'failed'; reason: SyncFailure; detail?: string };

/** The outside world of a run, as the sync callable is given it. */
export interface SyncWorld {
  db: Firestore;
  client: MailerLiteClient;
  groups: GroupConfig;
  clock: Clock;
  logger: Logger;
  /** The suppression list and the contact records, with their keys (privacy/mailboxes.ts). */
  mailboxes: Mailboxes;
  /** Observes the run's steps; tests throw from it to crash the run between two steps. */
  onProgress?: (event: SyncProgressEvent) => void | Promise<void>;
}

export interface SyncRunDeps extends SyncWorld {
  documentId: FieldPath;
  /** Clock ms after which no request starts and no wait lasts. */
  stopAt: number;
  options: SyncOptions;
}

export type SyncResult =
  /** Another run holds the lease. */
  | { kind: 'running' }
  /** The last run ended less than the minimum interval ago. */
  | { kind: 'too_soon'; waitMs: number }
  /** The lease could not be read or written: nothing was done. */
  | { kind: 'database_unavailable' }
  /** The groups could not be resolved: nothing was sent. */
  | { kind: 'groups_failed'; reason: MailerLiteStop }
  | {
      kind: 'ran';
      stop: SyncStop;
      /** Distinct addresses handled: confirmed, delivered before, or passed as unsubscribed (Run.toSend). */
      synced: number;
      rejected: number;
      skipped: number;
      /** Sign-ups still after the cursor (null when Firestore could not count them). */
      remaining: number | null;
    };

export async function runSync(deps: SyncRunDeps): Promise<SyncResult> {
  const { clock, logger } = deps;
  let acquired: Awaited<ReturnType<typeof acquireSyncState>>;
  try {
    acquired = await acquireSyncState(deps.db, {
      owner: randomUUID(),
      clock,
      leaseMs: deps.options.leaseMs,
      minIntervalMs: deps.options.minIntervalMs,
    });
  } catch {
    return { kind: 'database_unavailable' };
  }
  if (!acquired.acquired) {
    if ('tooSoonUntil' in acquired) {
      logger.info('sync.refused_too_soon', { wait_ms: acquired.tooSoonUntil - clock.now() });
      return { kind: 'too_soon', waitMs: acquired.tooSoonUntil - clock.now() };
    }
    logger.info('sync.refused_running', { lease_expires_in_ms: acquired.leaseExpiresAt - clock.now() });
    return { kind: 'running' };
  }
  if (acquired.tookOverExpiredLease) logger.warn('sync.lease_taken_over');
  logger.info('sync.started', { resumed: acquired.cursor !== null });

  const { state } = acquired;
  let run: Run | undefined;
  let outcome = 'crashed';
  try {
    let groupIds: Record<SubscriptionType, string>;
    try {
      const request = { deadline: deps.stopAt };
      groupIds = {
        updates: await resolveGroupId(deps.client, deps.groups, 'updates', request),
        club: await resolveGroupId(deps.client, deps.groups, 'club', request),
      };
    } catch (error) {
      outcome = 'failed';
      const failure = failureOf(error);
      logger.error('sync.failed', {
        reason: 'groups',
        error: error instanceof Error ? error.name : 'unknown',
        // What to fix (a param, a group id, MailerLite's words): for the operator's logs, not the reply.
        detail: failure.message,
      });
      return { kind: 'groups_failed', reason: failure.stop };
    }

    run = new Run(deps, state, groupIds, acquired.cursor);
    const stop = await run.execute();
    outcome = stop.kind === 'failed' ? stop.reason : stop.kind;
    const { backlog } = run;
    const remaining = await backlog.remaining();
    const counts = { synced: run.syncedEmails.size, rejected: run.rejected, skipped: backlog.skipped };
    logger.info('sync.finished', {
      outcome,
      ...counts,
      erased: run.erased,
      delivered_before: run.delivered,
      read: backlog.read,
      duplicates: backlog.duplicates,
      remaining,
      requests: deps.client.requestCount,
    });
    return { kind: 'ran', stop, ...counts, remaining };
  } finally {
    // Best effort: if this write fails, the lease simply expires.
    await state
      .release({
        outcome,
        synced: run?.syncedEmails.size ?? 0,
        rejected: run?.rejected ?? 0,
        finished_at: new Date(clock.now()),
      })
      .catch(() => undefined);
  }
}

type Outcome = 'confirmed' | 'rejected' | 'retry';

/** The steps of one run, under a lease it holds. */
class Run {
  /**
   * Distinct addresses this run handled: confirmed by MailerLite, found delivered already, or passed
   * because their mailbox unsubscribed (toSend).
   */
  readonly syncedEmails = new Set<string>();
  rejected = 0;
  /** Contacts settled without a request: MailerLite had them in their groups already. */
  delivered = 0;
  /** Contacts not sent, or forgotten again, because the person unsubscribed while the run held them. */
  erased = 0;
  readonly backlog: Backlog;

  private readonly pacing: Pacing;
  private readonly failures = new Map<string, number>();
  private failure: { reason: SyncFailure; detail?: string } | null = null;
  private cursorDirty = false;
  /** The group ids in use; a type's id changes when its group had to be resolved again. */
  private readonly groupIds: Record<SubscriptionType, string>;
  /** Types whose group MailerLite refused in the last step, with the id it refused. */
  private readonly refusedGroups = new Map<SubscriptionType, string>();
  /** Types resolved again in this run: a second refusal stops the run instead of looping. */
  private readonly reResolved = new Set<SubscriptionType>();

  constructor(
    private readonly deps: SyncRunDeps,
    private readonly state: SyncState,
    groupIds: Record<SubscriptionType, string>,
    start: SyncCursor | null,
  ) {
    const { db, documentId, logger, options } = deps;
    this.backlog = new Backlog({ db, documentId, logger, pageSize: options.pageSize }, start);
    this.pacing = new Pacing(deps.client, logger, options);
    this.groupIds = { ...groupIds };
  }

  async execute(): Promise<SyncStop> {
    const { clock, stopAt } = this.deps;
    let stop: SyncStop = { kind: 'done' };
    while (!this.failure) {
      if (clock.now() >= stopAt) {
        stop = { kind: 'deadline' };
        break;
      }
      await this.readAhead();
      this.advanceCursor();
      if (this.failure) break;
      if (this.backlog.unsettled === 0) {
        if (this.backlog.done) break;
        // Only repeats or junk read so far: the cursor moves over them and the lease is renewed.
        await this.checkpoint(false);
        continue;
      }
      const now = clock.now();
      const reopens = this.pacing.globalReopensAt(now);
      if (reopens !== null) {
        await this.waitUntil(reopens);
        continue;
      }
      if (this.refusedGroups.size > 0) {
        await this.reResolveRefusedGroups();
        continue;
      }
      const pace = this.pacing.pace(now, this.backlog.nextContacts(this.pacing.stepSize(now)));
      if (pace.kind === 'wait') {
        await this.waitUntil(pace.until);
        continue;
      }
      const contacts = await this.toSend(pace.contacts);
      if (this.failure) break;
      if (contacts.length > 0) {
        const confirmed = await this.send({ kind: pace.kind, contacts });
        await this.recordConfirmed(confirmed);
        await this.forgetErased(confirmed);
      }
      this.advanceCursor();
      await this.checkpoint(false);
    }
    if (this.failure?.reason !== 'lease_lost') await this.checkpoint(true);
    return this.failure ? { kind: 'failed', ...this.failure } : stop;
  }

  /**
   * What a step sends, decided once per step:
   * - a contact whose mailbox is on the suppression list is passed without a request: the person
   *   unsubscribed, and no later sign-up of that mailbox puts it back;
   * - a contact whose mailbox MailerLite already has in every group it asks for (its row's own task
   *   delivered it, or an earlier run) is settled without a request;
   * - the others go under their mailbox's one spelling (mailerlite/contacts.ts), so spellings of one
   *   mailbox make one MailerLite contact.
   * Each of these counts as handled (`synced`): the reply counts what the run went through, never what
   * any one address's history made of it, so it cannot tell a stranger that an address unsubscribed.
   */
  private async toSend(contacts: Contact[]): Promise<Contact[]> {
    const { mailboxes, logger } = this.deps;
    let erased: Set<string>;
    let spellings: Map<string, Spelling>;
    try {
      erased = await this.suppressed(contacts);
      const rest = contacts.filter((contact) => !erased.has(contact.email));
      spellings = await mailboxes.contacts.spellingsFor(
        rest.map((contact) => contact.email),
        this.deps.clock.now(),
      );
    } catch {
      this.fail('database');
      return [];
    }
    const send: Contact[] = [];
    for (const contact of contacts) {
      if (erased.has(contact.email)) {
        this.backlog.pass(contact.email);
        this.syncedEmails.add(contact.email);
        this.erased += 1;
        logger.info('sync.erased_contact_skipped', emailFields(contact.email));
        continue;
      }
      const record = spellings.get(contact.email);
      if (record && [...contact.types].every((type) => record.lists.has(type))) {
        this.backlog.confirm(contact);
        this.syncedEmails.add(contact.email);
        this.delivered += 1;
        continue;
      }
      send.push(record ? { ...contact, address: record.email, record: record.ref } : contact);
    }
    return send;
  }

  /** Records on each mailbox the groups MailerLite confirmed, so no later task or run sends them again. */
  private async recordConfirmed(confirmed: Contact[]): Promise<void> {
    const recorded = confirmed.flatMap((contact) =>
      contact.record ? [{ ref: contact.record, lists: contact.types }] : [],
    );
    try {
      await this.deps.mailboxes.contacts.recordLists(recorded, this.deps.clock.now());
    } catch {
      this.fail('database');
    }
  }

  /**
   * After a step: a person who unsubscribed while MailerLite was taking their address (after the check
   * above) has just been put back. The erasure writes the suppression entry before it forgets the
   * subscriber, so either it forgot after our push, or the entry is visible here and the run forgets
   * it again.
   */
  private async forgetErased(confirmed: Contact[]): Promise<void> {
    if (confirmed.length === 0 || this.failure?.reason === 'lease_lost') return;
    let erased: Set<string>;
    try {
      erased = await this.suppressed(confirmed);
    } catch {
      this.fail('database');
      return;
    }
    for (const contact of confirmed) {
      if (!erased.has(contact.email)) continue;
      let forget: ForgetOutcome;
      try {
        forget = await this.deps.mailboxes.suppression.forgetNowOrLater(
          this.deps.client,
          contact.address ?? contact.email,
          { now: this.deps.clock.now(), request: { deadline: this.deps.stopAt } },
        );
      } catch {
        this.fail('database');
        return;
      }
      if (forget.kind === 'pending') {
        // The person asked to be gone: the forget waits on the suppression entry for pending-erasures.ts.
        this.deps.logger.error('sync.failed', {
          reason: 'forget_erased',
          forget_pending: true,
          ...emailFields(contact.email),
        });
        this.requestFailed({ error: forget.error, at: this.deps.clock.now() });
        continue;
      }
      this.backlog.pass(contact.email);
      this.erased += 1;
      this.deps.logger.warn('sync.erased_contact_forgotten', emailFields(contact.email));
    }
  }

  private suppressed(contacts: readonly Contact[]): Promise<Set<string>> {
    return this.deps.mailboxes.suppression.among(contacts.map((contact) => contact.email));
  }

  private async readAhead(): Promise<void> {
    try {
      await this.backlog.readAhead(BATCH_MAX_REQUESTS);
    } catch {
      this.fail('database');
    }
  }

  /** Sends one step; returns the contacts MailerLite confirmed. */
  private async send(step: { kind: 'batch' | 'single'; contacts: Contact[] }): Promise<Contact[]> {
    const sent = await sendStep(this.deps, step, this.groupIds, this.deps.stopAt);
    // A batch refused as a whole settles nothing: its contacts go again once the run may send.
    if ('failed' in sent) {
      this.requestFailed(sent.failed);
      return [];
    }
    const outcomes = sent.answers.map((answer) => this.settle(answer));
    const counts = {
      confirmed: outcomes.filter((outcome) => outcome === 'confirmed').length,
      rejected: outcomes.filter((outcome) => outcome === 'rejected').length,
      retry: outcomes.filter((outcome) => outcome === 'retry').length,
    };
    if (step.kind === 'batch') this.deps.logger.info('sync.batch_confirmed', counts);
    await this.deps.onProgress?.({ type: step.kind, ...counts });
    return step.contacts.filter((_, index) => outcomes[index] === 'confirmed');
  }

  /** What MailerLite's answer about one contact means for the run. */
  private settle({ contact, meaning, refusedGroupIds, failed }: Answer): Outcome {
    if (meaning === 'ok') {
      this.backlog.confirm(contact);
      this.syncedEmails.add(contact.email);
      return 'confirmed';
    }
    if (meaning === 'invalid_contact') {
      this.backlog.pass(contact.email);
      this.rejected += 1;
      this.deps.logger.warn('sync.contact_rejected', emailFields(contact.email));
      return 'rejected';
    }
    if (meaning === 'group_gone') {
      this.groupRefused(refusedGroupIds);
      return 'retry';
    }
    if (failed) {
      this.requestFailed(failed);
      return 'retry';
    }
    // An entry of a batch: about this contact alone.
    if (meaning === 'auth') this.fail('mailerlite_auth');
    else if (meaning === 'config' || meaning === 'unexpected') this.fail('mailerlite_config');
    else {
      const failures = (this.failures.get(contact.email) ?? 0) + 1;
      this.failures.set(contact.email, failures);
      if (failures >= this.deps.options.maxContactFailures) this.fail('mailerlite_unavailable');
    }
    return 'retry';
  }

  /**
   * MailerLite refused group ids as nonexistent, and applied nothing (it validates before it writes):
   * the contact stays unsettled and goes again, with the group resolved anew, in the step after the
   * re-resolution. Not counted as a failure of the contact: the refusal is about the group, and it
   * is retried once per run.
   */
  private groupRefused(ids: readonly string[]): void {
    let ours = false;
    for (const [type, id] of Object.entries(this.groupIds) as Array<[SubscriptionType, string]>) {
      if (!ids.includes(id)) continue;
      this.refusedGroups.set(type, id);
      ours = true;
    }
    // An id this run never sent cannot be resolved again; resending would loop.
    if (!ours) this.fail('mailerlite_config');
  }

  /** What a request that failed as a whole means for the run; its contacts stay unsettled. */
  private requestFailed({ error, at }: RequestFailure): void {
    const meaning = classify(error);
    if (meaning === 'rate_limited') {
      this.pacing.rateLimited(error, at);
      return;
    }
    if (error instanceof MailerLiteTimeoutError && at >= this.deps.stopAt - 1_000) return; // cut by the deadline
    this.fail(failureOf(error).stop);
  }

  private fail(reason: SyncFailure, detail?: string): void {
    if (this.failure) return;
    this.failure = detail === undefined ? { reason } : { reason, detail };
    if (detail !== undefined) this.deps.logger.error('sync.failed', { reason, detail });
  }

  /**
   * Between two steps, after MailerLite refused a group id as nonexistent: each refused type's group
   * is resolved again (found, or created if it was deleted) and the refused contacts, still unsettled
   * behind the cursor, go again in the next step with the new id. Once per type per run: a second
   * refusal, an id MailerLite still lists, or an id the operator configured stops the run, and the
   * cursor stays before every contact not delivered.
   */
  private async reResolveRefusedGroups(): Promise<void> {
    const { client, groups, clock, logger, options, stopAt } = this.deps;
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
        fresh = await reResolveGroupId(client, groups, type, refusedId, { deadline });
      } catch (error) {
        if (!(error instanceof MailerLiteError)) throw error;
        // A 429 leaves the refusal recorded, to be resolved again once the wait is over; the
        // deadline ends the run with the refused contacts still before the cursor.
        if (error instanceof MailerLiteConfiguredGroupError) this.fail('mailerlite_config', error.message);
        else if (error instanceof MailerLiteTimeoutError && clock.now() >= stopAt - 1_000) {
          await this.waitUntil(stopAt);
        } else this.requestFailed({ error, at: clock.now() });
        return;
      }
      this.reResolved.add(type);
      this.refusedGroups.delete(type);
      if (fresh === refusedId) {
        this.fail('mailerlite_config');
        return;
      }
      this.groupIds[type] = fresh;
      logger.warn('mailerlite.group_re_resolved', {
        subscription_type: type,
        refused_group_id: refusedId,
        group_id: fresh,
      });
    }
  }

  private async waitUntil(until: number): Promise<void> {
    const { clock, options, stopAt } = this.deps;
    const target = Math.min(until, stopAt);
    // Renew the lease first if the wait would take it close to expiring.
    if (target - this.state.leaseRenewedAt > options.leaseMs / 3) await this.checkpoint(true);
    const ms = target - clock.now();
    if (ms > 0 && !this.failure) await clock.sleep(ms);
  }

  private advanceCursor(): void {
    if (this.backlog.advance()) this.cursorDirty = true;
  }

  /** Writes the cursor when it moved, and renews the lease when a third of it has passed. */
  private async checkpoint(force: boolean): Promise<void> {
    if (this.failure?.reason === 'lease_lost') return;
    const { clock, options } = this.deps;
    const due = force || this.cursorDirty || clock.now() - this.state.leaseRenewedAt >= options.leaseMs / 3;
    if (!due) return;
    try {
      await this.state.checkpoint(this.cursorDirty ? (this.backlog.cursor ?? undefined) : undefined);
      this.cursorDirty = false;
    } catch (error) {
      this.fail(error instanceof LeaseLostError ? 'lease_lost' : 'database');
      return;
    }
    await this.deps.onProgress?.({ type: 'checkpoint', synced: this.syncedEmails.size });
  }
}

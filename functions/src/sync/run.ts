import { BATCH_MAX_REQUESTS } from '../mailerlite/client';
import { GroupHolder } from '../mailerlite/groups';
import { failureOf } from '../mailerlite/meaning';
import { emailFields } from '../privacy/log-fields';
import type { Spelling } from '../privacy/mailerlite-contacts';
import { RunFailures } from './failures';
import { Pacing } from './pacing';
import { Backlog, Checkpoints, type Contact } from './pages';
import { type Answer, sendStep } from './send';
import { type SyncCursor, type SyncState, startRun } from './state';
import type { SyncResult, SyncRunDeps, SyncStop } from './types';

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
 * The outside world (Firestore, the MailerLite client, the clock, the logger, the mailboxes' keyed
 * stores) comes in through `deps` (./types.ts); everything else is a plain import. What a failure means
 * for the run is ./failures.ts's, the cursor ./pages.ts's (the Backlog moves it, its Checkpoints write it
 * and renew the lease), the group ids a GroupHolder's (mailerlite/groups.ts), and the guard around each
 * push the suppression list's (privacy/suppression.ts).
 */

export async function runSync(deps: SyncRunDeps): Promise<SyncResult> {
  const { clock, logger } = deps;
  const started = await startRun(deps);
  if (started.kind !== 'started') return started;
  const { state } = started;
  let run: Run | undefined;
  let outcome = 'crashed';
  try {
    const groups = new GroupHolder(deps.client, deps.groups, logger);
    try {
      await groups.all({ deadline: deps.stopAt });
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

    run = new Run(deps, state, groups, started.cursor);
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
  private readonly failures: RunFailures;
  private readonly checkpoints: Checkpoints;

  constructor(
    private readonly deps: SyncRunDeps,
    state: SyncState,
    private readonly groups: GroupHolder,
    start: SyncCursor | null,
  ) {
    const { db, documentId, logger, options } = deps;
    this.backlog = new Backlog({ db, documentId, logger, pageSize: options.pageSize }, start);
    this.pacing = new Pacing(deps.client, logger, options);
    this.failures = new RunFailures({ ...deps, ...options, pacing: this.pacing });
    const synced = () => this.syncedEmails.size;
    this.checkpoints = new Checkpoints(state, this.backlog, this.failures, { ...deps, ...options, synced });
  }

  private get failure() {
    return this.failures.stopped;
  }

  async execute(): Promise<SyncStop> {
    const { clock, stopAt } = this.deps;
    const { checkpoints } = this;
    let stop: SyncStop = { kind: 'done' };
    while (!this.failure) {
      if (clock.now() >= stopAt) {
        stop = { kind: 'deadline' };
        break;
      }
      await this.backlog.readAhead(BATCH_MAX_REQUESTS).catch(() => this.failures.stop('database'));
      checkpoints.advance();
      if (this.failure) break;
      if (this.backlog.unsettled === 0) {
        if (this.backlog.done) break;
        // Only repeats or junk read so far: the cursor moves over them and the lease is renewed.
        await checkpoints.write(false);
        continue;
      }
      const now = clock.now();
      const reopens = this.pacing.globalReopensAt(now);
      if (reopens !== null) {
        await checkpoints.waitUntil(reopens);
        continue;
      }
      if (this.groups.hasRefused) {
        await this.reResolveRefusedGroups();
        continue;
      }
      const pace = this.pacing.pace(now, this.backlog.nextContacts(this.pacing.stepSize(now)));
      if (pace.kind === 'wait') {
        await checkpoints.waitUntil(pace.until);
        continue;
      }
      const contacts = await this.toSend(pace.contacts);
      if (this.failure) break;
      if (contacts.length > 0) {
        const confirmed = await this.send({ kind: pace.kind, contacts });
        await this.recordConfirmed(confirmed);
        await this.forgetErased(confirmed);
      }
      checkpoints.advance();
      await checkpoints.write(false);
    }
    if (this.failure?.reason !== 'lease_lost') await checkpoints.write(true);
    return this.failure ? { kind: 'failed', ...this.failure } : stop;
  }

  /**
   * What a step sends, decided once per step:
   * - a contact whose mailbox is on the suppression list is passed without a request: the person
   *   unsubscribed, and no later sign-up of that mailbox puts it back;
   * - a contact whose mailbox MailerLite already has in every group it asks for (its row's own task
   *   delivered it, or an earlier run) is settled without a request;
   * - the others go under their mailbox's one spelling (privacy/mailerlite-contacts.ts), so spellings of one
   *   mailbox make one MailerLite contact.
   * Each of these counts as handled (`synced`): the reply counts what the run went through, never what
   * any one address's history made of it, so it cannot tell a stranger that an address unsubscribed.
   */
  private async toSend(contacts: Contact[]): Promise<Contact[]> {
    const { mailboxes, logger } = this.deps;
    let erased: Set<string>;
    let spellings: Map<string, Spelling>;
    try {
      erased = await mailboxes.suppression.among(contacts.map((contact) => contact.email));
      const rest = contacts.filter((contact) => !erased.has(contact.email));
      spellings = await mailboxes.contacts.spellingsFor(
        rest.map((contact) => contact.email),
        this.deps.clock.now(),
      );
    } catch {
      this.failures.stop('database');
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
    const { contacts } = this.deps.mailboxes;
    await contacts.recordLists(recorded, this.deps.clock.now()).catch(() => this.failures.stop('database'));
  }

  /**
   * After a step: a person who unsubscribed while MailerLite was taking their address (after the check
   * above) has just been put back. The erasure writes the suppression entry before it forgets the
   * subscriber, so either it forgot after our push, or the entry is visible here and the run forgets
   * it again.
   */
  private async forgetErased(confirmed: Contact[]): Promise<void> {
    if (this.failure?.reason === 'lease_lost') return;
    const { client, clock, logger, mailboxes, stopAt } = this.deps;
    const request = { deadline: stopAt };
    try {
      for await (const { pushed, forget } of mailboxes.suppression.forgetIfSuppressed(client, confirmed, {
        clock,
        request,
      })) {
        if (forget.kind === 'pending') {
          this.failures.forgetPending(pushed.email, forget.finishTask, {
            error: forget.error,
            at: clock.now(),
          });
          continue;
        }
        this.backlog.pass(pushed.email);
        this.erased += 1;
        logger.warn('sync.erased_contact_forgotten', emailFields(pushed.email));
      }
    } catch {
      this.failures.stop('database');
    }
  }

  /** Sends one step; returns the contacts MailerLite confirmed. */
  private async send(step: { kind: 'batch' | 'single'; contacts: Contact[] }): Promise<Contact[]> {
    const sent = await sendStep(this.deps, step, this.groups.inUse, this.deps.stopAt);
    // A batch refused as a whole settles nothing: its contacts go again once the run may send.
    if ('failed' in sent) {
      this.failures.request(sent.failed);
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
      // MailerLite refused group ids as nonexistent, and applied nothing (it validates before it writes):
      // the contact goes again, with the group resolved anew, in the step after the re-resolution. Not a
      // failure of the contact: the refusal is about the group, resolved again once per run.
      // An id this run never sent cannot be resolved again; resending would loop.
      if (!this.groups.refuse(refusedGroupIds)) this.failures.stop('mailerlite_config');
    } else if (failed) this.failures.request(failed);
    else this.failures.entry(contact.email, meaning); // an entry of a batch: about this contact alone
    return 'retry';
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
    await this.checkpoints.write(true);
    if (this.failure) return;
    const deadline = Math.min(stopAt, clock.now() + options.leaseMs / 2);
    try {
      if (!(await this.groups.reResolveRefused({ deadline }))) this.failures.stop('mailerlite_config');
    } catch (error) {
      // The deadline ends the run with the refused contacts still before the cursor.
      if (this.failures.groupNotResolved(error, clock.now()) === 'deadline')
        await this.checkpoints.waitUntil(stopAt);
    }
  }
}

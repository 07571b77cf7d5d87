import type {
  DocumentReference,
  FieldPath,
  Firestore,
  Query,
  QueryDocumentSnapshot,
} from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import type { SignupSource, SubscriptionType } from '../contract';
import { SIGNUPS } from '../contract';
import { millisOf } from '../firestore';
import { LeaseLostError } from '../lease';
import type { Logger } from '../logs';
import { parseStoredSignup, type StoredSignup } from '../schemas';
import type { SyncCursor, SyncState } from './state';
import type { SyncFailure, SyncProgressEvent } from './types';

/** One address in a step, with every group its sign-ups in that step ask for. */
export interface Contact {
  email: string;
  types: Set<SubscriptionType>;
  /** The source of its latest sign-up in the step: MailerLite keeps one value per field. */
  source: SignupSource;
  /** Its first sign-up in the step (ms): sent as MailerLite's consent time, opted_in_at. */
  optedInAt: number;
  /** The spelling MailerLite knows its mailbox by, when it is not `email` (privacy/mailerlite-contacts.ts). */
  address?: string;
  /** Its mailbox's contact record, where the groups MailerLite confirms are recorded. */
  record?: DocumentReference;
}

/**
 * A sign-up read from Firestore that asks for something no earlier one kept here does: its place in the
 * order, and what it asks for. `through` is the last of the documents after it folded into it: settled
 * whenever it is (repeats of its pair or of an earlier one, documents that are not sign-ups), so the
 * cursor passes them together.
 */
interface ReadSignup {
  cursor: SyncCursor;
  through?: SyncCursor;
  signup: StoredSignup | null;
}

// Read ahead at least this many unsettled sign-ups, so a step rarely waits for Firestore.
const READ_AHEAD = 200;
// Settled sign-ups kept in memory before they are dropped (the cursor has passed them).
const KEEP_SETTLED = 5_000;
/**
 * Pages read before a step, at most: a run of repeats or junk in the way (a bot storing one address a
 * hundred thousand times) costs steps, each followed by a checkpoint that moves the cursor and renews the
 * lease, never one unbounded read before the first.
 */
export const PAGES_PER_STEP = 4;
/**
 * A page that held nothing to keep (all repeats or junk) makes the next one four times longer, up to this:
 * folded documents cost no memory, and fewer, longer queries get through junk sooner.
 */
export const MAX_SKIP_PAGE = 5_000;

/**
 * The sign-ups after the cursor, in (created_at, id) order, read a page at a time, and what this
 * run has settled of them: an (address, group) pair MailerLite confirmed, or an address it refused
 * as invalid. A settled sign-up needs no request; the cursor moves over settled sign-ups only, so it
 * never passes one MailerLite has not settled. Checkpoints (below) write it.
 */
export class Backlog {
  /** Sign-ups read in this run. */
  read = 0;
  /** Stored documents that are not sign-ups. */
  skipped = 0;
  /** Sign-ups that repeat a pair (address, list) read or settled before: folded, never kept. */
  duplicates = 0;

  private readonly signups: ReadSignup[] = [];
  /** Index in `signups` of the first sign-up not yet settled: the cursor sits just before it. */
  private frontier = 0;
  private readonly confirmedPairs = new Set<string>();
  /** Addresses passed without delivery: all their sign-ups are settled. */
  private readonly passed = new Set<string>();
  /** The pairs of the sign-ups kept here and not yet settled: a repeat of one is folded, not kept. */
  private readonly pendingPairs = new Set<string>();
  private lastRead: SyncCursor | null;
  /** The cursor moved over folded documents while nothing unsettled was kept. */
  private movedByFolding = false;
  /** The next page's length: pageSize, or longer while pages hold nothing to keep. */
  private pageLimit: number;
  private exhausted = false;
  private cursorAt: SyncCursor | null;

  constructor(
    private readonly deps: { db: Firestore; documentId: FieldPath; logger: Logger; pageSize: number },
    start: SyncCursor | null,
  ) {
    this.lastRead = start;
    this.cursorAt = start;
    this.pageLimit = deps.pageSize;
  }

  /** Where the cursor stands: everything up to it is settled. */
  get cursor(): SyncCursor | null {
    return this.cursorAt;
  }

  /** Sign-ups read but not yet passed by the cursor (the next run reads them again). */
  get unsettled(): number {
    return this.signups.length - this.frontier;
  }

  /** Every sign-up after the cursor has been read and settled. */
  get done(): boolean {
    return this.exhausted && this.unsettled === 0;
  }

  /**
   * Reads pages until a full step lies ahead (a batch of `stepMax` addresses, past what needs no
   * request), or PAGES_PER_STEP pages were read, whichever comes first. Throws what Firestore throws.
   */
  async readAhead(stepMax: number): Promise<void> {
    for (let pages = 0; pages < PAGES_PER_STEP; pages += 1) {
      if (this.exhausted) return;
      if (this.unsettled >= READ_AHEAD && this.nextContacts(stepMax).length >= stepMax) return;
      const limit = this.pageLimit;
      const docs = (await this.after(this.lastRead).limit(limit).get()).docs;
      const kept = this.signups.length;
      for (const doc of docs) this.accept(doc);
      if (docs.length < limit) this.exhausted = true;
      this.pageLimit =
        this.signups.length === kept
          ? Math.min(limit * 4, Math.max(MAX_SKIP_PAGE, this.deps.pageSize))
          : this.deps.pageSize;
    }
  }

  /**
   * The contacts of the next step: the unsettled sign-ups right after the cursor, folded into one
   * contact per normalised address carrying every group asked for, up to `max` addresses.
   */
  nextContacts(max: number): Contact[] {
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
        };
        contacts.set(signup.email, contact);
      }
      contact.types.add(signup.subscriptionType);
      contact.source = signup.source;
      contact.optedInAt = Math.min(contact.optedInAt, createdAt);
    }
    return [...contacts.values()];
  }

  /** MailerLite confirmed `contact` in every group it asked for. */
  confirm(contact: Contact): void {
    for (const type of contact.types) this.confirmedPairs.add(pair(contact.email, type));
  }

  /**
   * Every sign-up of `email` is passed without delivery: MailerLite refused the address as invalid, or
   * its mailbox is on the suppression list.
   */
  pass(email: string): void {
    this.passed.add(email);
  }

  /** Moves the cursor over every settled sign-up, up to the first that is not; true if it moved. */
  advance(): boolean {
    const folded = this.movedByFolding;
    this.movedByFolding = false;
    let index = this.frontier;
    while (index < this.signups.length && this.settled(this.signups[index] as ReadSignup)) index += 1;
    if (index === this.frontier) return folded;
    const last = this.signups[index - 1] as ReadSignup;
    this.cursorAt = last.through ?? last.cursor;
    for (let passed = this.frontier; passed < index; passed += 1) {
      const { signup } = this.signups[passed] as ReadSignup;
      if (signup) this.pendingPairs.delete(pair(signup.email, signup.subscriptionType));
    }
    this.frontier = index;
    if (this.frontier > KEEP_SETTLED) {
      this.signups.splice(0, this.frontier);
      this.frontier = 0;
    }
    return true;
  }

  /** How many sign-ups lie after the cursor, counted by Firestore; null if it cannot say. */
  async remaining(): Promise<number | null> {
    if (this.done) return 0;
    try {
      return (await this.after(this.cursorAt).count().get()).data().count;
    } catch {
      return null;
    }
  }

  private after(cursor: SyncCursor | null): Query {
    let query = this.deps.db.collection(SIGNUPS).orderBy('created_at').orderBy(this.deps.documentId);
    if (cursor) query = query.startAfter(cursor.created_at, cursor.id);
    return query;
  }

  /**
   * Keeps a read sign-up, or folds it into the last one kept when it needs nothing of its own: not a
   * sign-up, a pair settled already, or a pair a sign-up kept earlier asks for (settled with it). The
   * cursor can pass it only with that earlier one, so a run of junk or repeats costs no memory.
   */
  private accept(doc: QueryDocumentSnapshot): void {
    this.read += 1;
    const cursor: SyncCursor = { created_at: doc.get('created_at'), id: doc.id };
    this.lastRead = cursor;
    const signup = parseStoredSignup(doc.data());
    if (!signup) {
      // Not something the rules let a client write: nothing to deliver, and no address to log.
      this.skipped += 1;
      if (this.skipped <= 20) this.deps.logger.warn('sync.signup_skipped', { doc_id: doc.id });
    }
    const key = signup ? pair(signup.email, signup.subscriptionType) : null;
    const folds = signup === null || this.settled({ signup }) || (key !== null && this.pendingPairs.has(key));
    if (folds) {
      if (signup) this.duplicates += 1;
      if (this.frontier === this.signups.length) {
        // Nothing unsettled is kept before it: the cursor may pass it now.
        this.cursorAt = cursor;
        this.movedByFolding = true;
      } else {
        (this.signups[this.signups.length - 1] as ReadSignup).through = cursor;
      }
      return;
    }
    if (key) this.pendingPairs.add(key);
    this.signups.push({ cursor, signup });
  }

  private settled({ signup }: Pick<ReadSignup, 'signup'>): boolean {
    return (
      signup === null ||
      this.confirmedPairs.has(pair(signup.email, signup.subscriptionType)) ||
      this.passed.has(signup.email)
    );
  }
}

/** What the checkpoints ask of the run's failures (./failures.ts): whether it has stopped, and to stop it. */
interface RunStop {
  readonly stopped: { reason: SyncFailure } | null;
  stop(reason: SyncFailure): void;
}

/**
 * A run's checkpoints under its lease (./state.ts): the backlog's cursor is written once it has moved over
 * settled sign-ups, and the lease renewed when a third of it has passed, or before a wait that would take
 * it close to expiring. A write that fails stops the run: `lease_lost` when another run took the lease over
 * (then nothing more is written), `database` otherwise.
 */
export class Checkpoints {
  private cursorDirty = false;

  constructor(
    private readonly state: SyncState,
    private readonly backlog: Backlog,
    private readonly failures: RunStop,
    private readonly deps: {
      clock: Clock;
      leaseMs: number;
      stopAt: number;
      onProgress?: (event: SyncProgressEvent) => void | Promise<void>;
      /** Distinct addresses the run has handled, for the progress event. */
      synced: () => number;
    },
  ) {}

  /** Moves the cursor over what is settled; written at the next checkpoint. */
  advance(): void {
    if (this.backlog.advance()) this.cursorDirty = true;
  }

  /** Writes the cursor when it moved, and renews the lease when a third of it has passed (or when forced). */
  async write(force: boolean): Promise<void> {
    if (this.failures.stopped?.reason === 'lease_lost') return;
    const { clock, leaseMs } = this.deps;
    const due = force || this.cursorDirty || clock.now() - this.state.leaseRenewedAt >= leaseMs / 3;
    if (!due) return;
    try {
      await this.state.checkpoint(this.cursorDirty ? (this.backlog.cursor ?? undefined) : undefined);
      this.cursorDirty = false;
    } catch (error) {
      this.failures.stop(error instanceof LeaseLostError ? 'lease_lost' : 'database');
      return;
    }
    await this.deps.onProgress?.({ type: 'checkpoint', synced: this.deps.synced() });
  }

  /** Waits until `until` (never past the run's stop), renewing the lease first if the wait needs it. */
  async waitUntil(until: number): Promise<void> {
    const { clock, leaseMs, stopAt } = this.deps;
    const target = Math.min(until, stopAt);
    if (target - this.state.leaseRenewedAt > leaseMs / 3) await this.write(true);
    const ms = target - clock.now();
    if (ms > 0 && !this.failures.stopped) await clock.sleep(ms);
  }
}

function pair(email: string, type: SubscriptionType): string {
  return `${type} ${email}`;
}

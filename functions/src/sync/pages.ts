import type { FieldPath, Firestore, Query, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import { SIGNUPS } from '../contract';
import type { Logger } from '../logs';
import { millisOf } from '../privacy/erasure';
import { parseStoredSignup, type Source, type StoredSignup, type SubscriptionType } from '../schemas';
import type { SyncCursor } from './state';

/** One address in a step, with every group its sign-ups in that step ask for. */
export interface Contact {
  email: string;
  types: Set<SubscriptionType>;
  /** The source of its latest sign-up in the step: MailerLite keeps one value per field. */
  source: Source;
  /** Its first sign-up in the step (ms): sent as MailerLite's consent time, opted_in_at. */
  optedInAt: number;
  /** Its latest sign-up in the step (ms): an erasure at or after it erased every one of them. */
  signedUpAt: number;
}

/** A sign-up read from Firestore: its place in the order, and what it asks for (null: not a sign-up). */
interface ReadSignup {
  cursor: SyncCursor;
  signup: StoredSignup | null;
}

// Read ahead at least this many unsettled sign-ups, so a step rarely waits for Firestore.
const READ_AHEAD = 200;
// Settled sign-ups kept in memory before they are dropped (the cursor has passed them).
const KEEP_SETTLED = 5_000;

/**
 * The sign-ups after the cursor, in (created_at, id) order, read a page at a time, and what this
 * run has settled of them: an (address, group) pair MailerLite confirmed, or an address it refused
 * as invalid. A settled sign-up needs no request; the cursor moves over settled sign-ups only, so it
 * never passes one MailerLite has not settled.
 */
export class Backlog {
  /** Sign-ups read in this run. */
  read = 0;
  /** Stored documents that are not sign-ups. */
  skipped = 0;

  private readonly signups: ReadSignup[] = [];
  /** Index in `signups` of the first sign-up not yet settled: the cursor sits just before it. */
  private frontier = 0;
  private readonly confirmedPairs = new Set<string>();
  /** Per address passed without delivery: its sign-ups created up to this time (ms) are settled. */
  private readonly passedUpTo = new Map<string, number>();
  private lastRead: SyncCursor | null;
  private exhausted = false;
  private cursorAt: SyncCursor | null;

  constructor(
    private readonly deps: { db: Firestore; documentId: FieldPath; logger: Logger; pageSize: number },
    start: SyncCursor | null,
  ) {
    this.lastRead = start;
    this.cursorAt = start;
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
   * Reads pages until a full step lies ahead: far enough past runs of settled sign-ups (repeats of
   * an address already confirmed), which need no request, for a batch of `stepMax` addresses.
   * Throws what Firestore throws.
   */
  async readAhead(stepMax: number): Promise<void> {
    while (!this.exhausted && (this.unsettled < READ_AHEAD || this.nextContacts(stepMax).length < stepMax)) {
      const { pageSize } = this.deps;
      const docs = (await this.after(this.lastRead).limit(pageSize).get()).docs;
      for (const doc of docs) this.accept(doc);
      if (docs.length < pageSize) this.exhausted = true;
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

  /** MailerLite confirmed `contact` in every group it asked for. */
  confirm(contact: Contact): void {
    for (const type of contact.types) this.confirmedPairs.add(pair(contact.email, type));
  }

  /**
   * The sign-ups of `email` created up to `upTo` (ms; by default all of them) are passed without
   * delivery: MailerLite refused the address as invalid, or the person unsubscribed meanwhile (then
   * a sign-up made again after the erasure is a new consent and still goes).
   */
  pass(email: string, upTo = Number.POSITIVE_INFINITY): void {
    this.passedUpTo.set(email, Math.max(upTo, this.passedUpTo.get(email) ?? Number.NEGATIVE_INFINITY));
  }

  /** Moves the cursor over every settled sign-up, up to the first that is not; true if it moved. */
  advance(): boolean {
    let index = this.frontier;
    while (index < this.signups.length && this.settled(this.signups[index] as ReadSignup)) index += 1;
    if (index === this.frontier) return false;
    this.cursorAt = (this.signups[index - 1] as ReadSignup).cursor;
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
      this.confirmedPairs.has(pair(signup.email, signup.subscriptionType)) ||
      millisOf(cursor.created_at) <= (this.passedUpTo.get(signup.email) ?? Number.NEGATIVE_INFINITY)
    );
  }
}

function pair(email: string, type: SubscriptionType): string {
  return `${type} ${email}`;
}

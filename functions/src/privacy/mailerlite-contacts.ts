import type { DocumentData, DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { normaliseEmail, type SubscriptionType } from '../contract';
import { millisOf } from '../firestore';
import { claimLease, type Lease, type LeaseLayout, LeaseLostError } from '../lease';
import { hasPlusTag, mailboxKey } from './mailbox-key';

/**
 * One MailerLite contact per mailbox. `mailerlite_contacts/{mailbox key}` (privacy/mailbox-key.ts) holds
 * the one spelling MailerLite knows the mailbox by and the lists it was added to. The spelling is the first
 * one pushed, until a spelling without a `+tag` comes (mailbox-key.ts, hasPlusTag): the bare spelling is
 * the mailbox's own, and a `+tag` is a spelling anyone can make, which some providers bounce, so the contact
 * moves to the bare spelling once (deliver-contact.ts: the bare subscriber takes the tagged one's groups and
 * status, then the tagged one is forgotten) and keeps it for good. Any other later spelling (`kid+1@`, a
 * dotted Gmail) is sent as the recorded one, so it adds a group to the one contact, never a second
 * subscriber; an unsubscribe forgets that contact and deletes the record (privacy/erasure.ts). The record
 * also makes delivery idempotent across the paths that can ask for it (the row's own task, the page's
 * callable, the operator's sync): a list already recorded costs a read, not a MailerLite request.
 *
 * While the contact worker pushes, it holds the record's lease (lease.ts), so two tasks for one mailbox
 * never push at once; the sync, which pushes in batches, only reads and merges.
 */
export const MAILERLITE_CONTACTS = 'mailerlite_contacts';

export interface ContactRecord {
  /** The spelling MailerLite knows, normalised. */
  email: string;
  /** When each list's group was confirmed by MailerLite. */
  lists?: Partial<Record<SubscriptionType, Date>>;
  /** The last push or claim: the retention job deletes records not seen for its period, as it does rows. */
  seen_at: Date;
  push_owner?: string | null;
  push_expires_at?: Date | null;
}

/** Longer than a contact task can run (deliver-contact.ts, 60 s), so an expired lease's holder is gone. */
export const CONTACT_PUSH_LEASE_MS = 2 * 60_000;

const PUSH_LEASE: LeaseLayout = {
  expiresAt: (data) => {
    const record = data as Partial<ContactRecord>;
    return record.push_owner && record.push_expires_at ? millisOf(record.push_expires_at) : null;
  },
  fields: (owner, expiresAt) => ({ push_owner: expiresAt ? owner : null, push_expires_at: expiresAt }),
};

/** Whether a contact task holds the record's push lease at `now`: its upsert may still land. */
export function pushInFlight(record: DocumentSnapshot, now: number): boolean {
  const expiresAt = PUSH_LEASE.expiresAt(record.data() ?? {});
  return expiresAt !== null && expiresAt > now;
}

/** Whether the record says MailerLite has the mailbox in this list's group. */
export function hasList(record: DocumentData | undefined, list: SubscriptionType): boolean {
  return Boolean((record as Partial<ContactRecord> | undefined)?.lists?.[list]);
}

export type ContactClaim =
  /**
   * Push `email` (the mailbox's one spelling) into the list's group, then `delivered` or `abandon`. With
   * `movesFrom`, MailerLite knows the mailbox by that `+tag` spelling and `email` is the bare one, which
   * takes its place: `delivered` records `email` as the mailbox's spelling only then, so a push that fails
   * leaves the move to the next claim.
   */
  | {
      status: 'claimed';
      email: string;
      movesFrom?: string;
      delivered: () => Promise<void>;
      abandon: () => Promise<void>;
    }
  /** MailerLite already has the mailbox in this list's group. */
  | { status: 'already' }
  /** Another task is pushing this mailbox now. */
  | { status: 'in_progress' };

/** Ends the push, unless the record was erased or taken over meanwhile (then its new holder owns it). */
async function release(lease: Lease, fields: DocumentData): Promise<void> {
  try {
    await lease.release(fields);
  } catch (error) {
    // 5 NOT_FOUND: an unsubscribe deleted the record while the push ran; the worker's own check after the
    // push forgets the contact again.
    if (error instanceof LeaseLostError || (error as { code?: unknown }).code === 5) return;
    throw error;
  }
}

/** A mailbox's record as the sync reads it: the spelling MailerLite knows and the lists it has. */
export interface Spelling {
  email: string;
  lists: Set<SubscriptionType>;
  ref: DocumentReference;
}

/**
 * The mailboxes' contact records, named by their mailbox key under MAILBOX_KEY_SECRET: built once per
 * invocation with the other keyed stores (privacy/mailboxes.ts), so the code that pushes contacts holds no
 * secret.
 */
export class ContactRecords {
  constructor(
    private readonly db: Firestore,
    private readonly mailboxSecret: string,
  ) {}

  ref(email: string): DocumentReference {
    return this.db.collection(MAILERLITE_CONTACTS).doc(mailboxKey(this.mailboxSecret, email));
  }

  /**
   * Claims the mailbox's record to push it into `list`: refused when the list is recorded already (unless
   * `email` is the bare spelling of a mailbox MailerLite knows by a `+tag` one: then the contact moves), held
   * while another task pushes. The spelling is fixed by the first claim (`email`, or the sync's) and kept,
   * but for that one move to the bare spelling.
   */
  async claim(email: string, options: { list: SubscriptionType; clock: Clock }): Promise<ContactClaim> {
    const claim = await claimLease<'already'>(
      this.ref(email),
      {
        owner: crypto.randomUUID(),
        clock: options.clock,
        leaseMs: CONTACT_PUSH_LEASE_MS,
        layout: PUSH_LEASE,
      },
      (previous, now) => {
        const known = (previous as Partial<ContactRecord> | undefined)?.email;
        if (hasList(previous, options.list) && !movesTo(known, email)) return { refuse: 'already' };
        return { write: { seen_at: new Date(now), ...(known ? {} : { email }) } };
      },
    );
    if (claim.status === 'held') return { status: 'in_progress' };
    if (claim.status === 'refused') return { status: 'already' };
    const known = (claim.previous as Partial<ContactRecord> | undefined)?.email;
    const moves = movesTo(known, email);
    const { lease } = claim;
    return {
      status: 'claimed',
      email: moves ? normaliseEmail(email) : (known ?? email),
      ...(moves ? { movesFrom: known } : {}),
      delivered: () =>
        release(lease, {
          [`lists.${options.list}`]: new Date(options.clock.now()),
          ...(moves ? { email: normaliseEmail(email) } : {}),
        }),
      abandon: () => release(lease, {}).catch(() => undefined),
    };
  }

  /**
   * The sync's view of a step's mailboxes: each one's spelling (recorded, or fixed now for those pushed for
   * the first time) and the lists MailerLite already has. Two spellings of one mailbox in the step get one
   * spelling. Records are created with `create`, so a worker or another run that fixed a spelling first wins.
   */
  async spellingsFor(emails: readonly string[], now: number): Promise<Map<string, Spelling>> {
    const refs = new Map<string, DocumentReference>();
    for (const email of emails) refs.set(email, this.ref(email));
    const byKey = new Map<string, Spelling>();
    const unique = [...new Map([...refs.values()].map((ref) => [ref.id, ref])).values()];
    const read = async (list: DocumentReference[]) => {
      if (list.length === 0) return;
      for (const snapshot of await this.db.getAll(...list)) {
        const data = snapshot.data() as Partial<ContactRecord> | undefined;
        if (!data?.email) continue;
        const lists = new Set(Object.keys(data.lists ?? {}) as SubscriptionType[]);
        byKey.set(snapshot.id, { email: data.email, lists, ref: snapshot.ref });
      }
    };
    await read(unique);
    // First push of these mailboxes: the first spelling in the step becomes the one MailerLite knows, a bare
    // one before any `+tag` one (the mailbox's own, which the contact would move to anyway). One batched
    // write for them all (atomic: nothing is written if any exists); only when another writer fixed some
    // first, one create each, so the others still get theirs.
    const fresh = new Map<string, [string, DocumentReference]>();
    for (const [email, ref] of refs) {
      const chosen = fresh.get(ref.id)?.[0];
      if (!byKey.has(ref.id) && (chosen === undefined || movesTo(chosen, email)))
        fresh.set(ref.id, [email, ref]);
    }
    if (fresh.size === 0) return this.spellingsOf(refs, byKey);
    const record = (email: string) => ({ email, seen_at: new Date(now) });
    const fixed = ([email, ref]: [string, DocumentReference]) =>
      byKey.set(ref.id, { email, lists: new Set(), ref });
    const batch = this.db.batch();
    for (const [email, ref] of fresh.values()) batch.create(ref, record(email));
    try {
      await batch.commit();
      for (const entry of fresh.values()) fixed(entry);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      const created = await Promise.allSettled(
        [...fresh.values()].map(async (entry) => {
          await entry[1].create(record(entry[0]));
          fixed(entry);
        }),
      );
      for (const result of created) {
        if (result.status === 'rejected' && !isAlreadyExists(result.reason)) throw result.reason;
      }
      // Another writer created some of them first: read what it fixed.
      await read(unique.filter((ref) => !byKey.has(ref.id)));
    }
    return this.spellingsOf(refs, byKey);
  }

  private spellingsOf(
    refs: Map<string, DocumentReference>,
    byKey: Map<string, Spelling>,
  ): Map<string, Spelling> {
    const spellings = new Map<string, Spelling>();
    for (const [email, ref] of refs) {
      const record = byKey.get(ref.id);
      if (record) spellings.set(email, record);
    }
    return spellings;
  }

  /** Records lists MailerLite confirmed for these mailboxes (the sync's steps); one batched write. */
  async recordLists(
    confirmed: ReadonlyArray<{ ref: DocumentReference; lists: Iterable<SubscriptionType> }>,
    now: number,
  ): Promise<void> {
    if (confirmed.length === 0) return;
    const batch = this.db.batch();
    for (const { ref, lists } of confirmed) {
      const fields: Record<string, Date> = {};
      for (const list of lists) fields[list] = new Date(now);
      batch.set(ref, { lists: fields, seen_at: new Date(now) }, { merge: true });
    }
    await batch.commit();
  }
}

/** Whether the contact known by `known` moves to `email`: a `+tag` spelling gives way to the bare one. */
function movesTo(known: string | undefined, email: string): known is string {
  return known !== undefined && hasPlusTag(known) && !hasPlusTag(email);
}

// gRPC ALREADY_EXISTS: a create() found the document there.
function isAlreadyExists(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 6;
}

import type { DocumentData, DocumentReference, DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import { normaliseEmail, type SubscriptionType } from '../contract';
import { millisOf } from '../firestore';
import { claimLease, type Lease, type LeaseLayout, LeaseLostError } from '../lease';
import { hasPlusTag, mailboxKey } from './mailbox-key';

/**
 * One MailerLite contact per mailbox: `mailerlite_contacts/{mailbox key}` holds the one spelling MailerLite
 * knows and its lists. The first spelling pushed, moved once to a bare one after a `+tag` (which anyone can
 * make, and some providers bounce); later spellings add a group, never a subscriber. A recorded list costs a
 * read, not a request; a push holds the record's lease, so one mailbox is never pushed twice at once.
 */
export const MAILERLITE_CONTACTS = 'mailerlite_contacts';

interface ContactRecord {
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
  expiresAt: (data) => (data.push_owner && data.push_expires_at ? millisOf(data.push_expires_at) : null),
  fields: (owner, expiresAt) => ({ push_owner: expiresAt ? owner : null, push_expires_at: expiresAt }),
};

/** Whether a contact task holds the record's push lease at `now`: its upsert may still land. */
export function pushInFlight(record: DocumentSnapshot, now: number): boolean {
  return (PUSH_LEASE.expiresAt(record.data() ?? {}) ?? 0) > now;
}

export type ContactClaim =
  /** Push `email`, then `delivered` or `abandon`; a move is recorded on `delivered`, so a failure retries. */
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
    // 5 NOT_FOUND: erased during the push; the worker's check after it forgets the contact again.
    if (error instanceof LeaseLostError || (error as { code?: unknown }).code === 5) return;
    throw error;
  }
}

/** The contact records with their key, built once per invocation, so the code that pushes holds no secret. */
export class ContactRecords {
  constructor(
    private readonly db: Firestore,
    private readonly mailboxSecret: string,
  ) {}

  ref(email: string): DocumentReference {
    return this.db.collection(MAILERLITE_CONTACTS).doc(mailboxKey(this.mailboxSecret, email));
  }

  /** Claims the record to push into `list`: refused when recorded (but a move to bare), held while pushed. */
  async claim(email: string, options: { list: SubscriptionType; clock: Clock }): Promise<ContactClaim> {
    const claim = await claimLease<'already'>(
      this.ref(email),
      {
        owner: crypto.randomUUID(),
        clock: options.clock,
        leaseMs: CONTACT_PUSH_LEASE_MS,
        layout: PUSH_LEASE,
      },
      (previous: Partial<ContactRecord> | undefined, now) => {
        // MailerLite has the mailbox in this list's group: nothing to push, unless to move it to bare.
        if (previous?.lists?.[options.list] && !movesTo(previous.email, email)) return { refuse: 'already' };
        return { write: { seen_at: new Date(now), ...(previous?.email ? {} : { email }) } };
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
}

/** Whether the contact known by `known` moves to `email`: a `+tag` spelling gives way to the bare one. */
function movesTo(known: string | undefined, email: string): known is string {
  return known !== undefined && hasPlusTag(known) && !hasPlusTag(email);
}

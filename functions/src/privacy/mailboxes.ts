import type { Firestore } from 'firebase-admin/firestore';
import { domainKey } from '../mail/budget';
import { MAILBOX_KEY_SECRET, UNSUBSCRIBE_SECRET } from '../params';
import { mailboxKey } from './mailbox-key';
import { ContactRecords } from './mailerlite-contacts';
import { type FinishErasureLater, SuppressionList } from './suppression';
import { unsubscribeLink } from './unsubscribe-token';

/** What the server keeps per mailbox, with its keys, built once per call: the workers hold no secret. */
export class Mailboxes {
  /** `mailerlite_contacts/{mailbox key}`: the one spelling MailerLite knows and its lists. */
  readonly contacts: ContactRecords;
  /** `suppressed_mailboxes/{mailbox key}`: the mailboxes that unsubscribed. */
  readonly suppression: SuppressionList;

  constructor(
    db: Firestore,
    /**
     * The two secrets every function that handles an address declares (params.ts): MAILBOX_KEY_SECRET names
     * each mailbox's records (mailbox-key.ts); UNSUBSCRIBE_SECRET seals an address an unfinished erasure must
     * keep (unsubscribe-token.ts).
     */
    private readonly secrets: { mailbox: string; unsubscribe: string },
    /** Where an erasure left pending goes to be finished, from every function that may leave one. */
    finishErasureLater?: FinishErasureLater,
  ) {
    this.contacts = new ContactRecords(db, secrets.mailbox);
    this.suppression = new SuppressionList(db, secrets, this.contacts, finishErasureLater);
  }

  /** The mailbox's key (mailbox-key.ts): every spelling of one mailbox has one. */
  key(email: string): string {
    return mailboxKey(this.secrets.mailbox, email);
  }

  /** The one-click unsubscribe link for an address as typed (unsubscribe-token.ts). */
  unsubscribeLink(baseUrl: string, emailAsTyped: string): string {
    return unsubscribeLink(baseUrl, this.secrets.unsubscribe, emailAsTyped);
  }

  /** The key the mail budget counts the address's domain under, or null for a shared provider (mail/budget.ts). */
  domainKey(email: string): string | null {
    return domainKey(this.secrets.mailbox, email);
  }
}

/**
 * The mailboxes of a deployed function, keyed by the secrets it declares; `finishErasureLater` from a function
 * that may leave an erasure pending.
 */
export function mailboxesFromParams(db: Firestore, finishErasureLater?: FinishErasureLater): Mailboxes {
  return new Mailboxes(
    db,
    { mailbox: MAILBOX_KEY_SECRET.value(), unsubscribe: UNSUBSCRIBE_SECRET.value() },
    finishErasureLater,
  );
}

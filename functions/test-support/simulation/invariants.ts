// What a simulated run must hold, checked at every call that sends or pushes, at every clock hour, every five
// simulated minutes (between invocations) and at the end:
//
// - nothing sent or contacted after an erasure (the unsubscribe page said done);
// - mails in each clock hour at most MAIL_PER_HOUR, counted by Message-ID (a copy sent again under one
//   Message-ID is one message) [budget];
// - no part pending without a live task of its round or a due time for more than 15 minutes [budget];
// - within 31 minutes of the faults' end (the 15 minutes promised, and the sweep's), every part of every row
//   stored before that end done, skipped for the person's reason, or waiting its turn: in the mail budget, or
//   behind its mailbox's mail another row's task claimed less than a lease (5 minutes) before;
// - at the end, every part done or skipped for the person's own reason (`suppressed` only for a mailbox that
//   unsubscribed, `refused` only for the one mailbox the relay and MailerLite refuse as the person's own,
//   `already_thanked` only beside a row of that mailbox thanked); at most one thank-you at a +tag spelling and
//   one at the bare one per mailbox; each live mailbox thanked once at its owner's spelling (the bare one when
//   one was stored) and in MailerLite once (at a bare spelling then), an erased one not at all; no address in
//   any log line.
//
// The two marked [budget] failed on the code before issue 43 (its mail budget honoured a released slot in any
// hour, and a thank-you waiting its turn had no due time).

import type { Firestore } from 'firebase-admin/firestore';
import { SIGNUPS, THANK_YOU_MAILS } from '../../src/contract';
import { THANK_YOU_LEASE_MS } from '../../src/delivery/deliver-thank-you';
import { DELIVERY_PARTS, PART_QUEUE, type PartRecord } from '../../src/delivery/part-life';
import { hasPlusTag } from '../../src/privacy/mailbox-key';
import { addressOf, MINUTE, type Scenario } from './scenario';
import type { CloudTasks, Mail } from './world';

/** How long a part may be pending with neither a live task nor a due time. */
export const NET_GRACE_MS = 15 * MINUTE;

export interface Finding {
  invariant: string;
  message: string;
  /** Simulated ms after the run's start; null: at the end. */
  at: number | null;
}

const millis = (time: PartRecord['due_at']) =>
  time === undefined ? undefined : time instanceof Date ? time.getTime() : time.toMillis();

export class Invariants {
  readonly findings: Finding[] = [];
  private readonly counted = new Set<string>();
  private readonly netless = new Map<string, number>();
  private readonly t0: number;

  constructor(
    private readonly scenario: Scenario,
    private readonly keyOf: (email: string) => string,
    t0 = 0,
  ) {
    this.t0 = t0;
  }

  /** Records a finding; one per invariant and subject is enough to replay it. */
  found(invariant: string, message: string, at: number): void {
    if (this.findings.some((each) => each.invariant === invariant && each.message === message)) return;
    this.findings.push({ invariant, message, at: at === Number.MAX_SAFE_INTEGER ? null : at - this.t0 });
  }

  /** The mails the relay accepted first in this clock hour, at most the budget. */
  hourEnded(mails: Mail[], hour: number): void {
    let count = 0;
    for (const mail of mails) {
      if (Math.floor(mail.at / (60 * MINUTE)) !== hour || this.counted.has(mail.messageId)) continue;
      this.counted.add(mail.messageId);
      count += 1;
    }
    if (count > this.scenario.mailPerHour)
      this.found(
        'hour_budget',
        `${count} thank-yous left in one clock hour, over MAIL_PER_HOUR ${this.scenario.mailPerHour}`,
        hour * 60 * MINUTE,
      );
  }

  /**
   * Every pending part has a live task of its round or a due time, or has had one within 15 minutes. Answers
   * how many parts are not settled (a row not indexed yet counts).
   */
  async audit(db: Firestore, tasks: CloudTasks, now: number): Promise<number> {
    const rows = (await db.collection(SIGNUPS).get()).docs;
    const seen = new Set<string>();
    let unsettled = 0;
    for (const row of rows) {
      for (const part of DELIVERY_PARTS) {
        const record = row.get(`delivery.${part}`) as PartRecord | undefined;
        if (record?.state !== 'done' && record?.state !== 'skipped') unsettled += 1;
        if (record?.state !== 'pending') continue;
        if (millis(record.due_at) !== undefined || tasks.liveFor(row.id, PART_QUEUE[part], record.round))
          continue;
        const key = `${row.id} ${part}`;
        seen.add(key);
        const since = this.netless.get(key) ?? now;
        this.netless.set(key, since);
        if (now - since > NET_GRACE_MS)
          this.found(
            'net',
            `a ${part} pending (${record.reason ?? 'no reason'}) with neither a live task nor a due time for over 15 minutes`,
            now,
          );
      }
    }
    for (const key of this.netless.keys()) if (!seen.has(key)) this.netless.delete(key);
    return unsettled;
  }

  /**
   * A pending part waiting its turn at `now`: held by the mail budget, or a thank-you whose task found its
   * mailbox's mail claimed by another row's (`in_progress`) less than a lease before. It ends `already_thanked`
   * once that send is saved, and the lease bounds the wait: a release at a budget hour's start sends one row's
   * mail while the mailbox's other rows retry seconds later.
   */
  private async waitsItsTurn(
    db: Firestore,
    part: (typeof DELIVERY_PARTS)[number],
    record: PartRecord,
    mailbox: string,
    now: number,
  ): Promise<boolean> {
    if (record.reason === 'mail_budget') return true;
    if (part !== 'thank_you' || record.last_error !== 'in_progress') return false;
    const claimed = millis((await db.collection(THANK_YOU_MAILS).doc(mailbox).get()).get('claimed_at'));
    return claimed !== undefined && now - claimed <= THANK_YOU_LEASE_MS;
  }

  /**
   * Every part of every row (stored by `storedBy`, if given) settled for the person's reason (or, given
   * `waitsAt`, waiting its turn then: waitsItsTurn). A mailbox is thanked when any row of it is, one stored
   * after `storedBy` too: a row waiting its turn in the budget ends `already_thanked` when a later spelling of
   * its mailbox takes the claim and sends on the mailbox's slot first.
   */
  async settled(
    db: Firestore,
    erasedAt: Map<string, number>,
    when: string,
    /** When the check is made, if a part may still wait its turn then; null at the end, where none may. */
    waitsAt: number | null,
    storedBy?: number,
  ): Promise<void> {
    const all = (await db.collection(SIGNUPS).get()).docs;
    const thanked = new Set<string>();
    for (const row of all)
      if ((row.get('delivery.thank_you') as PartRecord | undefined)?.state === 'done')
        thanked.add(this.keyOf(row.get('email')));
    const rows = all.filter((row) => storedBy === undefined || row.get('created_at').toMillis() <= storedBy);
    const refused =
      this.scenario.refused >= 0 ? this.keyOf(addressOf(this.scenario, this.scenario.refused, 'bare')) : null;
    const unsubscribing = new Set(
      this.scenario.erasures.map((each) => this.keyOf(addressOf(this.scenario, each.person, 'bare'))),
    );
    for (const row of rows) {
      const key = this.keyOf(row.get('email'));
      for (const part of DELIVERY_PARTS) {
        const record = row.get(`delivery.${part}`) as PartRecord | undefined;
        const at = Number.MAX_SAFE_INTEGER;
        if (!record) {
          this.found('settled', `a row never indexed ${when} (${row.id})`, at);
          continue;
        }
        if (record.state === 'done') continue;
        if (record.state === 'pending') {
          if (waitsAt === null || !(await this.waitsItsTurn(db, part, record, key, waitsAt)))
            this.found(
              'settled',
              `a ${part} still pending (${record.reason ?? 'no reason'}, ${record.last_error ?? 'no error'}) ${when}`,
              at,
            );
          continue;
        }
        const reason = record.reason;
        if (
          reason === 'suppressed'
            ? unsubscribing.has(key) || erasedAt.has(key)
            : reason === 'refused'
              ? key === refused
              : reason === 'already_thanked'
                ? part === 'thank_you' && thanked.has(key)
                : false
        )
          continue;
        this.found('reason', `a ${part} skipped for ${reason}, not the person's reason`, at);
      }
    }
  }

  async atEnd(
    db: Firestore,
    world: {
      rows: Array<{ id: string; email: string }>;
      mails: Mail[];
      subscribers: Map<string, Set<string>>;
      erasedAt: Map<string, number>;
      refusedMailbox: string | null;
      logText: string;
    },
  ): Promise<void> {
    const end = Number.MAX_SAFE_INTEGER;
    await this.settled(db, world.erasedAt, 'at the end', null);
    const messages = new Map<string, { tagged: Set<string>; bare: Set<string> }>();
    for (const mail of world.mails) {
      const each = messages.get(mail.mailbox) ?? { tagged: new Set(), bare: new Set() };
      each[mail.tagged ? 'tagged' : 'bare'].add(mail.messageId);
      messages.set(mail.mailbox, each);
    }
    const contacts = new Map<string, string[]>();
    for (const email of world.subscribers.keys())
      contacts.set(this.keyOf(email), [...(contacts.get(this.keyOf(email)) ?? []), email]);
    const withBare = new Set(
      world.rows.filter((row) => !hasPlusTag(row.email)).map((row) => this.keyOf(row.email)),
    );
    for (const key of new Set(world.rows.map((row) => this.keyOf(row.email)))) {
      const mailed = messages.get(key) ?? { tagged: new Set(), bare: new Set() };
      const contacted = contacts.get(key) ?? [];
      if (mailed.tagged.size > 1)
        this.found('once', `${mailed.tagged.size} thank-yous to the +tag spellings of one mailbox`, end);
      if (mailed.bare.size > 1)
        this.found('once', `${mailed.bare.size} thank-yous to the bare spellings of one mailbox`, end);
      if (world.erasedAt.has(key)) {
        if (contacted.length > 0) this.found('erased', 'an erased mailbox left in MailerLite', end);
        continue;
      }
      const expected = key === world.refusedMailbox ? 0 : 1;
      if (withBare.has(key)) {
        if (mailed.bare.size !== expected)
          this.found(
            'thanked',
            `${mailed.bare.size} thank-yous at the bare spelling of a mailbox stored bare (expected ${expected})`,
            end,
          );
        if (contacted.some((email) => hasPlusTag(email)))
          this.found('contacted', 'a contact left at a +tag spelling of a mailbox stored bare', end);
      } else if (mailed.tagged.size !== expected)
        this.found(
          'thanked',
          `${mailed.tagged.size} thank-yous to a mailbox stored only at +tag spellings (expected ${expected})`,
          end,
        );
      if (contacted.length !== expected)
        this.found(
          'contacted',
          `${contacted.length} MailerLite contacts of one mailbox (expected ${expected})`,
          end,
        );
    }
    const logs = world.logText.toLowerCase();
    if (world.rows.some((row) => logs.includes(row.email.toLowerCase())))
      this.found('logs', 'an address in a log line', end);
  }
}

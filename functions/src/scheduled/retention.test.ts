import { describe, expect, it } from 'vitest';
import { testBed } from '../../test-support/bed';
import { HERO, MAILBOX_SECRET, seedSignups } from '../../test-support/signups';
import { systemClock } from '../clock';
import { SIGNUPS, SUPPRESSIONS, THANK_YOU_MAILS } from '../contract';
import { mailboxKey } from '../privacy/mailbox-key';
import { MAILERLITE_CONTACTS } from '../privacy/mailerlite-contacts';
import { handleRetention } from './retention';

const bed = testBed();
const { db } = bed;

const DAY = 24 * 60 * 60_000;

async function ids(collection: string): Promise<string[]> {
  return (await db.collection(collection).get()).docs.map((doc) => doc.id).sort();
}

describe('the retention job', () => {
  it('erases only sign-ups older than RETENTION_DAYS, page by page, keeps thank-you records and the suppression list, and logs counts only', async () => {
    const now = Date.now();
    // 7 sign-ups just past the limit (more than two pages of 3), 2 just inside it.
    await seedSignups(
      db,
      Array.from({ length: 7 }, (_, i) => ({ email: `old${i}@example.com`, ...HERO })),
      now - 731 * DAY,
    );
    await seedSignups(
      db,
      [
        { email: 'recent@example.com', ...HERO },
        { email: 'yesterday@example.com', ...HERO },
      ],
      now - 729 * DAY,
    );
    await db
      .collection(THANK_YOU_MAILS)
      .doc('old')
      .set({ state: 'sent', claimed_at: new Date(now - 800 * DAY) });
    await db
      .collection(THANK_YOU_MAILS)
      .doc('new')
      .set({ state: 'sent', claimed_at: new Date(now - DAY) });
    // The suppression list is kept however old: it is what keeps an unsubscribed mailbox unmailed.
    await db
      .collection(SUPPRESSIONS)
      .doc('old')
      .set({ erased_at: new Date(now - 800 * DAY) });

    // A mailbox's MailerLite contact record names an address: it goes when not seen within the period.
    await db
      .collection(MAILERLITE_CONTACTS)
      .doc('old')
      .set({ email: 'old@example.com', seen_at: new Date(now - 800 * DAY) });
    await db
      .collection(MAILERLITE_CONTACTS)
      .doc('new')
      .set({ email: 'recent@example.com', seen_at: new Date(now - DAY) });

    // One not seen within the period but still used by a kept sign-up of its mailbox stays, marked seen:
    // deleting it would make that mailbox's next spelling a second MailerLite subscriber.
    const inUse = mailboxKey(MAILBOX_SECRET, 'yesterday@example.com');
    await db
      .collection(MAILERLITE_CONTACTS)
      .doc(inUse)
      .set({ email: 'yesterday@example.com', seen_at: new Date(now - 800 * DAY) });

    // The mail budget's counters: yesterday's go, this hour's stays.
    await db
      .collection('_mail_budget')
      .doc('old-0')
      .set({ sent: 3, hour_start: new Date(now - 2 * DAY) });
    await db
      .collection('_mail_budget')
      .doc('now-0')
      .set({ sent: 1, hour_start: new Date(now - 60_000) });

    const report = await handleRetention({
      db,
      clock: systemClock,
      logger: bed.logger,
      retentionDays: 730,
      pageSize: 3,
    });

    expect(report).toEqual({ signups: 7, contacts: 1, mailBudgets: 1 });
    expect(await ids(MAILERLITE_CONTACTS)).toEqual([inUse, 'new'].sort());
    expect(
      (await db.collection(MAILERLITE_CONTACTS).doc(inUse).get()).get('seen_at').toMillis(),
    ).toBeGreaterThanOrEqual(now);
    expect(await ids('_mail_budget')).toEqual(['now-0']);
    const left = (await db.collection(SIGNUPS).get()).docs.map((doc) => doc.get('email')).sort();
    expect(left).toEqual(['recent@example.com', 'yesterday@example.com']);
    expect(await ids(THANK_YOU_MAILS)).toEqual(['new', 'old']);
    expect(await ids(SUPPRESSIONS)).toEqual(['old']);
    expect(bed.logger.entries).toEqual([
      {
        severity: 'info',
        event: 'retention.erased',
        fields: expect.objectContaining({
          retention_days: 730,
          signups: 7,
        }),
      },
    ]);
    expect(bed.logger.text()).not.toContain('@example.com');
  });

  it('with nothing old, erases nothing', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }]);
    expect(await handleRetention({ db, clock: systemClock, logger: bed.logger, retentionDays: 1 })).toEqual({
      signups: 0,
      contacts: 0,
      mailBudgets: 0,
    });
    expect(await ids(SIGNUPS)).toHaveLength(1);
  });

  it('refuses a retention period that is not a whole number of days, erasing nothing', async () => {
    await seedSignups(db, [{ email: 'kid@example.com', ...HERO }], Date.now() - 10 * DAY);
    for (const days of [0, -1, 1.5, Number.NaN]) {
      await expect(
        handleRetention({ db, clock: systemClock, logger: bed.logger, retentionDays: days }),
      ).rejects.toThrow(RangeError);
    }
    expect(await ids(SIGNUPS)).toHaveLength(1);
  });
});

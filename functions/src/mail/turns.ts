import type { DocumentReference, Firestore, QueryDocumentSnapshot } from 'firebase-admin/firestore';
import type { Logger } from '../logs';
import { budgetHour, type MailSlot, markReleased, takeMailSlot } from './budget';

/**
 * The mail budget as a turn, not a lottery. A thank-you the budget holds back (mail/budget.ts) joins a waiting
 * line and its task ends: nothing of it runs again until its turn comes. The reconciler
 * (scheduled/reconcile-deliveries.ts) releases the lines every run, oldest first: each release takes a slot
 * of the current hour (the domain's share counted as for any mail) and enqueues the part's next round with the
 * slot held (the task's `slot`), so the released mail sends without asking the budget again. A release run
 * stops when the hour's budget is spent; a line stops when its domain's share is. Waiting costs nothing per
 * hour: the work of a run is bounded by the budget (the slots it grants, and one look at each line it passes),
 * not by how many wait. With a backlog of 100,000, an hour still dispatches at most MAIL_PER_HOUR thank-you tasks
 * (npm run bench:budget prints the figures).
 *
 * The lines: one per catch-all domain (its keyed hash, budget.ts's domainKey: no domain is stored) and one,
 * `shared`, for every shared mail provider's mailbox (no share of its own, as in the budget). A fresh thank-you
 * whose line has anyone waiting joins behind them instead of taking a slot first, so a slot freed in the hour
 * goes to the line's oldest, not to whoever asks next; and after an hour whose whole budget was spent, every
 * fresh thank-you joins its line until that hour's release run has given the oldest their turn (budget.ts,
 * beforeItsRelease), so a new hour's first sign-ups do not take the slots of those who waited through the last.
 *
 *   _mail_lines/{line}                   `head_at`: when the line's oldest waiter joined (the lines' order)
 *   _mail_lines/{line}/waiting/{signup}  `queued_at`: one waiting thank-you, by its row's id (no address)
 *
 * A line's document exists while it has waiters: a joiner writes its entry, then creates the line's document if
 * it is missing; the releaser deletes an emptied line's document, then looks at its entries again and writes
 * it back if one joined meanwhile. Either the releaser's second look sees the joiner's entry, or the joiner's
 * look comes after the delete and creates it: no entry is left in a line nobody lists.
 *
 * Should an entry be lost anyway, the part's due time (tasks/part-life.ts, `waits`) brings the reconciler back to
 * it: its worker joins the line again.
 */
export const MAIL_LINES = '_mail_lines';
export const WAITING = 'waiting';
/** The line of the shared mail providers' mailboxes (no domain key: budget.ts's domainKey answers null). */
export const SHARED_LINE = 'shared';

/** The line of a mailbox whose domain's key (budget.ts, domainKey) is `domain`. */
export function lineOf(domain: string | null): string {
  return domain ?? SHARED_LINE;
}

/** The domain key a line counts against (null: the shared line, only the whole budget). */
function domainOfLine(line: string): string | null {
  return line === SHARED_LINE ? null : line;
}

const lineRef = (db: Firestore, line: string) => db.collection(MAIL_LINES).doc(line);
const entriesOf = (db: Firestore, line: string) => lineRef(db, line).collection(WAITING);

/** Where a thank-you stands in its line: nobody waits, it is the oldest waiter, or someone waits ahead of it. */
export type Place = 'empty' | 'first' | 'behind';

/** One read: the line's oldest entry. */
export async function placeInLine(db: Firestore, line: string, signup: string): Promise<Place> {
  const head = await entriesOf(db, line).orderBy('queued_at').limit(1).get();
  const first = head.docs[0];
  if (!first) return 'empty';
  return first.id === signup ? 'first' : 'behind';
}

/** Joins the line at `now`; a thank-you already in it keeps its place. */
export async function joinLine(db: Firestore, line: string, signup: string, now: number): Promise<void> {
  await entriesOf(db, line)
    .doc(signup)
    .create({ queued_at: new Date(now) })
    .catch(alreadyThere);
  const ref = lineRef(db, line);
  if (!(await ref.get()).exists) await ref.create({ head_at: new Date(now) }).catch(alreadyThere);
}

/** Leaves the line: the thank-you took a slot as its oldest waiter. */
export async function leaveLine(db: Firestore, line: string, signup: string): Promise<void> {
  await entriesOf(db, line).doc(signup).delete();
}

/** 6 ALREADY_EXISTS: somebody wrote it first, which is what was wanted. */
function alreadyThere(error: { code?: unknown }): void {
  if (error.code !== 6) throw error;
}

export interface ReleaseDeps {
  db: Firestore;
  now: number;
  /** MAIL_PER_HOUR. */
  perHour: number;
  logger: Logger;
  /** Whether the row's thank-you still waits (the row is there and its part is not settled). */
  stillWaiting: (signup: string) => Promise<boolean>;
  /** Enqueues the part's next round with a slot of the hour held (`hour`: the budget's window it was counted in). */
  release: (signup: string, hour: number) => Promise<void>;
  /** Entries looked at in one run, at most (the run's bound besides the budget; default twice the budget). */
  maxEntries?: number;
}

export interface ReleaseReport {
  released: number;
  /** Entries whose row was erased or whose part was settled meanwhile: taken out of the line, no slot spent. */
  dropped: number;
  lines: number;
  /** Why the run stopped: the hour's budget is spent, or no line has anyone to release this hour. */
  stopped: 'budget' | 'lines' | 'bound';
}

/** Entries read at a time from one line. */
const PAGE = 20;

/**
 * Releases waiting thank-yous, oldest first: the lines in the order of their oldest waiter, each line oldest
 * first, until the hour's budget is spent, each line until its domain's share is. A slot is taken for each
 * before its next round is enqueued; the entry leaves the line once that round is enqueued.
 */
export async function releaseTurns(deps: ReleaseDeps): Promise<ReleaseReport> {
  const report = await releaseInOrder(deps);
  // However it stopped, the hour's oldest had their turn first: fresh thank-yous may take what is left.
  await markReleased(deps.db, deps.now);
  return report;
}

async function releaseInOrder(deps: ReleaseDeps): Promise<ReleaseReport> {
  const report: ReleaseReport = { released: 0, dropped: 0, lines: 0, stopped: 'lines' };
  const bound = deps.maxEntries ?? 2 * deps.perHour;
  let looked = 0;
  const seen = new Set<string>();
  let after: QueryDocumentSnapshot | undefined;
  for (;;) {
    let query = deps.db.collection(MAIL_LINES).orderBy('head_at').limit(PAGE);
    if (after) query = query.startAfter(after);
    const lines = await query.get();
    if (lines.empty) return report;
    for (const line of lines.docs) {
      if (seen.has(line.id)) continue;
      seen.add(line.id);
      report.lines += 1;
      const stopped = await releaseLine(line.id, deps, report, bound - looked);
      looked += stopped.looked;
      if (stopped.why === 'budget' || looked >= bound) {
        report.stopped = stopped.why === 'budget' ? 'budget' : 'bound';
        return report;
      }
    }
    after = lines.docs[lines.docs.length - 1];
  }
}

async function releaseLine(
  line: string,
  deps: ReleaseDeps,
  report: ReleaseReport,
  bound: number,
): Promise<{ why: 'budget' | 'domain' | 'empty' | 'bound'; looked: number }> {
  const hour = budgetHour(deps.now);
  let looked = 0;
  let why: 'budget' | 'domain' | 'empty' | 'bound' = 'empty';
  let cursor: QueryDocumentSnapshot | undefined;
  for (;;) {
    let query = entriesOf(deps.db, line)
      .orderBy('queued_at')
      .limit(Math.min(PAGE, bound - looked));
    if (cursor) query = query.startAfter(cursor);
    const page = await query.get();
    if (page.empty) break;
    looked += page.size;
    cursor = page.docs[page.docs.length - 1];
    const waiting = await Promise.all(page.docs.map((entry) => deps.stillWaiting(entry.id)));
    // Slots one at a time, oldest first; the releases of the page's winners together.
    const granted: DocumentReference[] = [];
    const gone: DocumentReference[] = [];
    for (const [index, entry] of page.docs.entries()) {
      if (!waiting[index]) {
        gone.push(entry.ref);
        continue;
      }
      const slot: MailSlot = await takeMailSlot(deps.db, {
        now: deps.now,
        perHour: deps.perHour,
        domain: domainOfLine(line),
        logger: deps.logger,
      });
      if (!slot.granted) {
        why = slot.spent;
        break;
      }
      granted.push(entry.ref);
    }
    // Each entry leaves the line only once its round is enqueued: a release that failed keeps its place (its
    // slot is lost to the hour), and the run fails after the others have settled.
    const settled = await Promise.allSettled([
      ...gone.map(async (ref) => {
        await ref.delete();
        report.dropped += 1;
      }),
      ...granted.map(async (ref) => {
        await deps.release(ref.id, hour);
        await ref.delete();
        report.released += 1;
      }),
    ]);
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    if (why !== 'empty') break;
    if (looked >= bound) {
      why = 'bound';
      break;
    }
  }
  await settleHead(deps.db, line);
  return { why, looked };
}

/** The line's `head_at` moved to its oldest entry, or the line's document deleted when it has none (see above). */
async function settleHead(db: Firestore, line: string): Promise<void> {
  const oldest = async () => (await entriesOf(db, line).orderBy('queued_at').limit(1).get()).docs[0];
  const head = await oldest();
  if (head) {
    await lineRef(db, line).set({ head_at: head.get('queued_at') });
    return;
  }
  await lineRef(db, line).delete();
  const joined = await oldest();
  if (joined) await lineRef(db, line).set({ head_at: joined.get('queued_at') });
}

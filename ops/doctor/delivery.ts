// Where delivery stands: every sign-up's two parts (functions/src/delivery/part-life.ts), counted by state and
// reason, with the oldest waiting age. Only the `delivery` map of each row is read (a projection), so no address
// reaches this process, and only counts and reasons are printed. A part that has made no progress for
// STUCK_AFTER_MS, or a thank-you that has waited for the mail budget longer than MAIL_PER_HOUR explains, fails
// the check with its likely causes in order. Also whether the reconciler's range queries have the single-field
// indexes firestore.indexes.json declares (a real project only: the emulator enforces no index).

import type { Firestore } from 'firebase-admin/firestore';
import { COLLECTIONS } from '../../contract/src/index.ts';
import { type CheckResult, cannotTell, fail, messageOf, pass } from './report.ts';

/** A pending part whose record has not changed for this long is stuck: its task is not being run. */
export const STUCK_AFTER_MS = 30 * 60_000;
/** What a wait for the mail budget may take beyond its count's hours (the reconciler's 10-minute turns). */
const BUDGET_SLACK_MS = 30 * 60_000;

/**
 * Why parts stop moving, the likeliest first (docs/deploy.md, "Roles the first deploy needs"): Cloud Tasks'
 * calls refused, a queue paused, the reconciler not running.
 */
export const STUCK_CAUSES = [
  'the runtime account may not invoke the task functions or enqueue to their queues: grant <project-number>-compute@developer.gserviceaccount.com roles/run.invoker on the task functions (gcloud functions add-invoker-policy-binding deliver-contact, deliver-thank-you) and roles/cloudtasks.enqueuer (docs/deploy.md, Roles the first deploy needs)',
  'a queue is paused: gcloud tasks queues describe deliver-contact --location=us-central1 (and deliver-thank-you); resume it with gcloud tasks queues resume',
  'the reconciler does not run: Cloud Scheduler > reconcile-deliveries should run every 10 minutes; its logs say reconcile.run',
];

export const PARTS = ['contact', 'thank_you'] as const;
export type Part = (typeof PARTS)[number];
const PART_LABEL: Record<Part, string> = { contact: 'contact', thank_you: 'thank-you' };

/** A row as the summary sees it: when it was written, and its delivery map if the trigger wrote one. */
export interface RowView {
  createdAtMs: number | null;
  delivery?: Partial<Record<Part, PartView | undefined>>;
}

/** A part's fields as stored (part-life.ts, PartRecord); times as written (Date) or read back (Timestamp). */
export interface PartView {
  state?: unknown;
  reason?: unknown;
  attempts?: unknown;
  updated_at?: unknown;
}

export interface PartSummary {
  done: number;
  skipped: Map<string, number>;
  /** Pending parts by reason; `queued` when the part waits for its task with no reason given. */
  waiting: Map<string, { count: number; oldestMs: number | null }>;
  /** Pending parts (not waiting for the budget) unchanged for STUCK_AFTER_MS, and the oldest change of them. */
  stuck: { count: number; sinceMs: number | null };
  /** Parts waiting for the mail budget, and the oldest change of them. */
  budget: { count: number; sinceMs: number | null };
}

export interface DeliverySummary {
  rows: number;
  /** Rows the sign-up trigger has not reached (no part written yet), and the oldest of them. */
  unreached: { count: number; oldestMs: number | null };
  parts: Record<Part, PartSummary>;
}

const emptyPart = (): PartSummary => ({
  done: 0,
  skipped: new Map(),
  waiting: new Map(),
  stuck: { count: 0, sinceMs: null },
  budget: { count: 0, sinceMs: null },
});

function millisOf(time: unknown): number | null {
  if (time instanceof Date) return time.getTime();
  const toMillis = (time as { toMillis?: unknown } | null | undefined)?.toMillis;
  return typeof toMillis === 'function' ? (toMillis.call(time) as number) : null;
}

export function summarise(rows: Iterable<RowView>, now: number): DeliverySummary {
  const summary: DeliverySummary = {
    rows: 0,
    unreached: { count: 0, oldestMs: null },
    parts: { contact: emptyPart(), thank_you: emptyPart() },
  };
  const older = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
  for (const row of rows) {
    summary.rows += 1;
    if (!row.delivery || PARTS.every((part) => !row.delivery?.[part])) {
      summary.unreached.count += 1;
      summary.unreached.oldestMs = older(summary.unreached.oldestMs, row.createdAtMs);
      continue;
    }
    for (const part of PARTS) {
      const record = row.delivery[part];
      const into = summary.parts[part];
      const reason = typeof record?.reason === 'string' && record.reason ? record.reason : null;
      if (record?.state === 'done') {
        into.done += 1;
      } else if (record?.state === 'skipped') {
        const key = reason ?? 'no reason';
        into.skipped.set(key, (into.skipped.get(key) ?? 0) + 1);
      } else {
        // Pending, or a part not written yet beside one that was.
        const key = record ? (reason ?? 'queued') : 'not enqueued';
        const entry = into.waiting.get(key) ?? { count: 0, oldestMs: null };
        entry.count += 1;
        entry.oldestMs = older(entry.oldestMs, row.createdAtMs);
        into.waiting.set(key, entry);
        // Its last change: the part's updated_at, or the row's creation for a part not written yet.
        const changed = millisOf(record?.updated_at) ?? row.createdAtMs;
        if (reason === 'mail_budget') {
          into.budget.count += 1;
          into.budget.sinceMs = older(into.budget.sinceMs, changed);
        } else if (changed !== null && now - changed >= STUCK_AFTER_MS) {
          into.stuck.count += 1;
          into.stuck.sinceMs = older(into.stuck.sinceMs, changed);
        }
      }
    }
  }
  return summary;
}

export function age(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

const sorted = <V>(map: Map<string, V>) => [...map.entries()].sort(([a], [b]) => a.localeCompare(b));

export function summaryLines(summary: DeliverySummary, now: number): string[] {
  const since = (oldest: number | null) => (oldest === null ? '' : `, oldest ${age(now - oldest)}`);
  const lines: string[] = [];
  if (summary.unreached.count > 0) {
    lines.push(
      `not yet reached by the sign-up trigger: ${summary.unreached.count}${since(summary.unreached.oldestMs)}`,
    );
  }
  for (const part of PARTS) {
    const { done, skipped, waiting } = summary.parts[part];
    const skippedCount = [...skipped.values()].reduce((sum, n) => sum + n, 0);
    const waitingCount = [...waiting.values()].reduce((sum, entry) => sum + entry.count, 0);
    const skippedText = sorted(skipped)
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ');
    const waitingText = sorted(waiting)
      .map(([reason, entry]) => `${reason} ${entry.count}${since(entry.oldestMs)}`)
      .join('; ');
    lines.push(
      `${`${PART_LABEL[part]}:`.padEnd(11)} done ${done} · skipped ${skippedCount}${skippedText ? ` (${skippedText})` : ''} · waiting ${waitingCount}${waitingText ? ` (${waitingText})` : ''}`,
    );
  }
  return lines;
}

/** The delivery summary as a check: it fails when a part waits for our own setup, or has stopped moving. */
export function deliveryResult(
  summary: DeliverySummary,
  now: number,
  mailPerHour: number = Number.POSITIVE_INFINITY,
): CheckResult {
  const lines = summaryLines(summary, now);
  const detail = `${summary.rows} sign-up${summary.rows === 1 ? '' : 's'}`;
  const stuck = PARTS.map((part) => summary.parts[part].stuck.count);
  const stuckSince = PARTS.map((part) => summary.parts[part].stuck.sinceMs).filter(
    (ms): ms is number => ms !== null,
  );
  if (stuck.some((count) => count > 0)) {
    return {
      ...fail(
        'delivery',
        `${detail}; ${stuck[0]} contact and ${stuck[1]} thank-you part(s) pending with no progress for ${age(now - Math.min(...stuckSince))}`,
        `look at, in this order: ${STUCK_CAUSES.map((cause, index) => `(${index + 1}) ${cause}`).join('; ')}`,
      ),
      lines,
    };
  }
  const { budget } = summary.parts.thank_you;
  // MAIL_PER_HOUR mails an hour: the last of `count` waiting is through in ceil(count / MAIL_PER_HOUR) hours.
  const explained =
    Number.isFinite(mailPerHour) && mailPerHour > 0
      ? Math.ceil(budget.count / mailPerHour) * 3_600_000 + BUDGET_SLACK_MS
      : Number.POSITIVE_INFINITY;
  if (budget.sinceMs !== null && now - budget.sinceMs > explained) {
    return {
      ...fail(
        'delivery',
        `${detail}; ${budget.count} thank-you(s) wait for the mail budget, the oldest for ${age(now - budget.sinceMs)}, longer than ${mailPerHour} an hour (MAIL_PER_HOUR) explains`,
        `look at, in this order: ${STUCK_CAUSES.map((cause, index) => `(${index + 1}) ${cause}`).join('; ')}`,
      ),
      lines,
    };
  }
  const forSetup = PARTS.map((part) => summary.parts[part].waiting.get('configuration')?.count ?? 0);
  if (forSetup.some((count) => count > 0)) {
    return {
      ...fail(
        'delivery',
        `${detail}; ${forSetup[0]} contact and ${forSetup[1]} thank-you part(s) wait for our setup (configuration)`,
        'fix what the MailerLite and relay checks fail (the logs name it: add_contact.failed, thank_you.failed); Cloud Tasks tries those parts again every few minutes (at most 10) until then',
      ),
      lines,
    };
  }
  return pass('delivery', detail, lines);
}

async function readRows(db: Firestore): Promise<RowView[]> {
  const snapshot = await db.collection(COLLECTIONS.signups).select('delivery').get();
  return snapshot.docs.map((doc) => ({
    createdAtMs: doc.createTime ? doc.createTime.toMillis() : null,
    delivery: doc.get('delivery') as RowView['delivery'],
  }));
}

export async function checkDelivery(
  db: Firestore | null,
  options: { now: number; mailPerHour: number; unavailable?: string },
): Promise<CheckResult> {
  if (!db) return cannotTell('delivery', options.unavailable ?? 'no database to read');
  try {
    const rows = await readRows(db);
    const mailPerHour = Number.isFinite(options.mailPerHour) ? options.mailPerHour : Number.POSITIVE_INFINITY;
    return deliveryResult(summarise(rows, options.now), options.now, mailPerHour);
  } catch (error) {
    return cannotTell(
      'delivery',
      `cannot read ${COLLECTIONS.signups}: ${messageOf(error)}`,
      credentialsFix(error),
    );
  }
}

function credentialsFix(error: unknown): string | undefined {
  return /credential|permission|PERMISSION_DENIED|UNAUTHENTICATED/i.test(messageOf(error))
    ? 'sign in with an account that may read Firestore: gcloud auth application-default login'
    : undefined;
}

/**
 * The reconciler's query per part (delivery/reconcile-deliveries.ts), limited to one row: Firestore refuses it
 * with FAILED_PRECONDITION where the `delivery.<part>.due_at` index is missing (the rest of `delivery` is
 * exempt from indexing).
 */
export async function checkIndexes(
  db: Firestore | null,
  options: { emulator: boolean; unavailable?: string },
): Promise<CheckResult> {
  const name = 'Firestore indexes';
  if (!db) return cannotTell(name, options.unavailable ?? 'no database to read');
  if (options.emulator) {
    return cannotTell(
      name,
      'the Firestore emulator serves every query without indexes',
      'run with --project <id>',
    );
  }
  const missing: string[] = [];
  try {
    for (const part of PARTS) {
      const field = `delivery.${part}.due_at`;
      try {
        // An empty projection: the row's name only, never its address.
        await db
          .collection(COLLECTIONS.signups)
          .where(field, '<=', new Date())
          .orderBy(field)
          .select()
          .limit(1)
          .get();
      } catch (error) {
        if ((error as { code?: unknown }).code === 9) missing.push(field);
        else throw error;
      }
    }
  } catch (error) {
    return cannotTell(
      name,
      `cannot query ${COLLECTIONS.signups}: ${messageOf(error)}`,
      credentialsFix(error),
    );
  }
  return missing.length === 0
    ? pass(
        name,
        "the reconciler's queries on delivery.contact.due_at and delivery.thank_you.due_at are served",
      )
    : fail(
        name,
        `Firestore has no index for ${missing.join(' and ')}, so reconcile-deliveries fails every run`,
        'deploy firestore.indexes.json: npm run deploy -- --project <id> (or npx firebase deploy --only firestore:indexes --project <id>)',
      );
}

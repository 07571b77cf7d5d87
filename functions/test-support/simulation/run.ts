// One seed of the delivery simulation: the production handlers (the trigger, both workers, the reconciler, the
// erasure, its finish tasks and its half-hourly job) on the Firestore emulator, under a simulated clock, in the
// world of world.ts, interleaved by a cooperative scheduler: up to four invocations are in flight, and at each
// outside call the seed picks which goes on next, or starts a ready task, trigger, Sync press or scheduled run
// beside them. The handlers are reached only through their exported entry points and deps objects. SIM_DEBUG
// prints each trigger's and reconciler run's outcome with its simulated minute.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Firestore } from 'firebase-admin/firestore';
import { handleSyncEmailsToMailerlite, SYNC_TIMEOUT_SECONDS } from '../../src/callables/sync-callable';
import type { Clock } from '../../src/clock';
import { SIGNUPS } from '../../src/contract';
import { handleDeliverContact } from '../../src/delivery/deliver-contact';
import { handleDeliverThankYou } from '../../src/delivery/deliver-thank-you';
import { indexSignup } from '../../src/delivery/index-signup';
import { enqueuePart } from '../../src/delivery/part-life';
import { ERASURE_QUEUE, QUEUES } from '../../src/delivery/queue';
import { RECONCILE_EVERY_MS, reconcileDeliveries } from '../../src/delivery/reconcile-deliveries';
import { eraseAddress } from '../../src/privacy/erasure';
import {
  finishErasureLater,
  finishPendingErasures,
  handleFinishErasure,
} from '../../src/privacy/finish-erasure';
import { hasPlusTag, mailboxKey } from '../../src/privacy/mailbox-key';
import { faultyFirestore, unavailable } from '../faulty-firestore';
import type { FirestoreHarness } from '../firestore';
import { recordingLogger } from '../logs';
import { FINAL, HERO, MAILBOX_SECRET, testMailboxes } from '../signups';
import { type Finding, Invariants } from './invariants';
import { addressOf, faultsEnd, HOUR, MINUTE, type Outage, type Scenario, T0 } from './scenario';
import { CloudTasks, Crash, mailerLite, random, relay, type SimTask, type WorldRun } from './world';

/**
 * Which invocation an outside call belongs to. One for every run: on Node 20 each AsyncLocalStorage ever entered
 * is visited at every promise the process makes, so one per run made each later run slower than the last.
 */
const invocation = new AsyncLocalStorage<Invocation>();

/** Invocations in flight at once, at most. */
const MAX_IN_FLIGHT = 4;
/** How often the invariants about nets look at every part (besides each clock hour and the end). */
const AUDIT_EVERY_MS = 5 * MINUTE;

interface Invocation {
  crashAt: number;
  calls: number;
  crashed: boolean;
  /** Set while the invocation waits at an outside call for the scheduler to let it go on. */
  wake: (() => void) | null;
  parked: Promise<void> | null;
}

type Event =
  | { kind: 'trigger'; row: string; runAt: number; attempts: number; seq: number }
  | { kind: 'again'; task: SimTask; runAt: number; seq: number }
  | { kind: 'reconcile'; runAt: number; seq: number }
  | { kind: 'sync'; runAt: number; seq: number }
  | { kind: 'pending_erasures'; runAt: number; seq: number }
  | { kind: 'erase'; email: string; mailbox: string; runAt: number; seq: number }
  | { kind: 'audit'; runAt: number; seq: number }
  | { kind: 'store'; row: string; email: string; club: boolean; runAt: number; seq: number };

export interface RunResult {
  findings: Finding[];
  rows: number;
  mails: number;
  /** Wall time of the run, ms. */
  ms: number;
  /** Simulated time the run covered, ms. */
  simulatedMs: number;
}

/**
 * Plays one seed's scenario; null when `deadline` (performance.now()'s clock) passed first: the run is abandoned
 * where it stood (its invocations parked, never resumed) and counts for nothing.
 */
export async function simulate(
  scenario: Scenario,
  firestore: FirestoreHarness,
  deadline = Number.POSITIVE_INFINITY,
): Promise<RunResult | null> {
  const started = performance.now();
  await firestore.reset();
  const rand = random(scenario.seed);
  let now = T0;
  const faultsUntil = T0 + faultsEnd(scenario);
  const faulting = () => now < T0 + scenario.faultsUntil;
  const clock: Clock = {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  };
  const keyOf = (email: string) => mailboxKey(MAILBOX_SECRET, email);
  // The scheduler: one invocation goes on at a time, up to the next outside call it makes (or its end); there
  // the scheduler picks which one goes next, or starts a ready event beside them. So interleavings are of
  // whole outside calls, and a run replays from its seed.
  let stepped: (() => void) | null = null;
  const stepDone = () => {
    const done = stepped;
    stepped = null;
    done?.();
  };
  const yieldTurn = async () => {
    const current = invocation.getStore();
    if (!current) return;
    // Calls the invocation makes side by side (Promise.all) wait for the same turn.
    if (current.parked) return current.parked;
    current.parked = new Promise<void>((resume) => {
      current.wake = () => {
        current.wake = null;
        current.parked = null;
        resume();
      };
      stepDone();
    });
    return current.parked;
  };
  const crashed = () => {
    const current = invocation.getStore();
    if (!current) return false;
    current.calls += 1;
    if (!current.crashed && current.calls === current.crashAt) current.crashed = true;
    return current.crashed;
  };
  const erasedAt = new Map<string, number>();
  const invariants = new Invariants(scenario, keyOf, T0);
  const run: WorldRun = {
    now: () => now,
    rand,
    outside: async () => {
      await yieldTurn();
      if (crashed()) throw new Crash('The invocation died.');
    },
    crashed,
    outage: (service) => {
      const outage = scenario.outages.find(
        (each: Outage) => each.service === service && now >= T0 + each.from && now < T0 + each.to,
      );
      return outage && rand() < outage.share ? outage : null;
    },
    fault: (chance) => faulting() && chance > 0 && rand() < chance,
    found: (invariant, message) => invariants.found(invariant, message, now),
    erased: (mailbox) => erasedAt.has(mailbox),
  };
  const logger = recordingLogger();

  // Firestore: every call may fail before it applies or after (its answer lost); an outage fails them all.
  const db: Firestore = faultyFirestore(
    firestore.db,
    (call) => {
      if (crashed()) return new Crash('The invocation died.');
      if (run.outage('firestore') || run.fault(scenario.dbBefore)) return { before: unavailable() };
      if (call !== 'get' && call !== 'query' && call !== 'getAll' && run.fault(scenario.dbAfter))
        return { after: unavailable() };
      return undefined;
    },
    { yieldBefore: yieldTurn },
  );
  const tasks = new CloudTasks(run, scenario.late, scenario.enqueueBefore, scenario.enqueueAfter);
  const refusedMailbox = scenario.refused >= 0 ? keyOf(addressOf(scenario, scenario.refused, 'bare')) : null;
  const { transport, mails } = relay(run, keyOf, hasPlusTag, refusedMailbox);
  const { client, subscribers } = mailerLite(run, keyOf, refusedMailbox);
  const mailboxes = testMailboxes(db, finishErasureLater(tasks.enqueue, clock));
  const eraseDeps = { db, client, clock, logger, mailboxes };
  const enqueueParts = enqueuePart(tasks.enqueue, MAILBOX_SECRET);
  const triggerDeps = { mailboxSecret: MAILBOX_SECRET, enqueuePart: enqueueParts, clock, logger };
  const contactDeps = { db, client, groups: { updates: '111', club: '222' }, clock, logger, mailboxes };
  const thankYouDeps = {
    db,
    transport: async () => transport,
    from: 'GOODY <hello@goody.example>',
    unsubscribeLink: (email: string) => mailboxes.unsubscribeLink('https://goody.example/unsubscribe', email),
    clock,
    logger,
    mailboxes,
    mailPerHour: scenario.mailPerHour,
    enqueuePart: enqueueParts,
    saveRetryMs: [1_000, 2_000],
  };

  // The sign-ups, stored as the page does, each followed by its trigger (retried on failure).
  let seq = 0;
  const events: Event[] = [];
  const rows: Array<{ id: string; email: string }> = [];
  const stores = [...scenario.signups].sort((a, b) => a.at - b.at);
  // Each row is stored at its time, as the page does (under an id drawn from the seed, so a run replays), and its
  // trigger runs just after.
  const idOf = () =>
    Array.from(
      { length: 20 },
      () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(rand() * 62)],
    ).join('');
  for (const signup of stores) {
    const email = addressOf(scenario, signup.person, signup.spelling);
    const row = { id: idOf(), email };
    rows.push(row);
    events.push({ kind: 'store', row: row.id, email, club: signup.club, runAt: T0 + signup.at, seq: seq++ });
  }
  for (const at of scenario.syncPresses) events.push({ kind: 'sync', runAt: T0 + at, seq: seq++ });
  for (const erasure of scenario.erasures) {
    const first = Math.min(...stores.filter((each) => each.person === erasure.person).map((each) => each.at));
    const email = addressOf(scenario, erasure.person, 'bare');
    events.push({
      kind: 'erase',
      email,
      mailbox: keyOf(email),
      runAt: T0 + (Number.isFinite(first) ? first : 0) + erasure.after,
      seq: seq++,
    });
  }
  // The horizon: the faults' end, the 15 minutes (plus a sweep) promised after it, then the budget's hours for
  // every mailbox's thank-you, and an hour's slack.
  // At most two thank-yous a mailbox: one at a +tag spelling, one at the bare one.
  const thankYous = new Set(stores.map((each) => `${each.person} ${each.spelling === 'tagged'}`)).size;
  const budgetHours = scenario.mailPerHour < thankYous ? Math.ceil(thankYous / scenario.mailPerHour) : 0;
  const settledBy = faultsUntil + 31 * MINUTE;
  const end = Math.max(settledBy, T0 + 3 * HOUR) + (budgetHours + 1) * HOUR;
  const firstRun = T0 + Math.floor(rand() * RECONCILE_EVERY_MS);
  for (let at = firstRun; at <= end; at += RECONCILE_EVERY_MS)
    events.push({ kind: 'reconcile', runAt: at, seq: seq++ });
  for (let at = firstRun + MINUTE; at <= end; at += 30 * MINUTE)
    events.push({ kind: 'pending_erasures', runAt: at, seq: seq++ });
  for (let at = T0 + AUDIT_EVERY_MS; at <= end; at += AUDIT_EVERY_MS)
    events.push({ kind: 'audit', runAt: at, seq: seq++ });

  /** An invocation in flight, and what its end does (a retry, an acknowledgement, a record). */
  const inFlight: Array<{ current: Invocation; then: (ok: boolean) => void }> = [];
  const begin = (work: () => Promise<unknown>, then: (ok: boolean) => void = () => {}) => {
    const current: Invocation = {
      crashAt: faulting() && rand() < scenario.crash ? 1 + Math.floor(rand() * 12) : 0,
      calls: 0,
      crashed: false,
      wake: null,
      parked: null,
    };
    const flight = { current, then };
    inFlight.push(flight);
    return new Promise<void>((turnOver) => {
      stepped = turnOver;
      invocation
        .run(current, work)
        .then(
          () => !current.crashed,
          () => false,
        )
        .then((ok) => {
          inFlight.splice(inFlight.indexOf(flight), 1);
          then(ok);
          stepDone();
        });
    });
  };
  const resume = (current: Invocation) =>
    new Promise<void>((turnOver) => {
      stepped = turnOver;
      current.wake?.();
    });
  const deliver = (task: SimTask) => () =>
    task.queue === ERASURE_QUEUE
      ? handleFinishErasure(task.payload, eraseDeps)
      : task.queue === QUEUES.contact
        ? handleDeliverContact(task.payload, contactDeps)
        : handleDeliverThankYou(task.payload, thankYouDeps);

  const startTask = (task: SimTask) => {
    tasks.started(task);
    // Cloud Tasks delivers at least once: now and then a second delivery of the same task at the same time.
    if (run.fault(scenario.concurrent) && inFlight.length + 1 < MAX_IN_FLIGHT)
      events.push({ kind: 'again', task, runAt: now, seq: seq++ });
    return begin(deliver(task), (ok) => {
      tasks.finished(task, ok);
      if (ok && run.fault(scenario.twice))
        events.push({ kind: 'again', task, runAt: now + Math.floor(rand() * MINUTE), seq: seq++ });
    });
  };
  const start = (event: Event) => {
    switch (event.kind) {
      case 'reconcile':
        return begin(async () => {
          const report = await reconcileDeliveries({
            db,
            clock,
            logger,
            enqueuePart: enqueueParts,
            index: (ref) => indexSignup(ref, triggerDeps),
          });
          if (process.env.SIM_DEBUG)
            console.info(`reconcile at ${(now - T0) / 60_000} min: ${JSON.stringify(report)}`);
        });
      case 'sync':
        // The operator's press; its reply is the page's, its effect the rows' (their contact parts' new rounds).
        return begin(() =>
          handleSyncEmailsToMailerlite(
            {},
            {
              db,
              clock,
              logger,
              enqueuePart: enqueueParts,
              index: (ref) => indexSignup(ref, triggerDeps),
              deadline: now + SYNC_TIMEOUT_SECONDS * 1000,
              // One hand-over at a time: the scheduler's turns are an invocation's outside calls one after another,
              // and ten side by side (the Sync's own setting) left it waiting on calls it does not schedule.
              options: { concurrency: 1 },
            },
          ),
        );
      case 'pending_erasures':
        return begin(() => finishPendingErasures(eraseDeps));
      case 'again':
        return begin(deliver(event.task));
      case 'erase':
        // The person presses the button; should the page fail, they press again a minute later.
        return begin(
          () => eraseAddress(event.email, eraseDeps),
          (ok) => {
            if (ok) erasedAt.set(event.mailbox, now);
            else events.push({ ...event, runAt: now + MINUTE, seq: seq++ });
          },
        );
      case 'trigger':
        return begin(
          () => indexSignup(db.collection(SIGNUPS).doc(event.row), triggerDeps),
          (ok) => {
            if (process.env.SIM_DEBUG)
              console.info(`trigger ${event.row} at ${(now - T0) / 60_000} min: ${ok}`);
            if (!ok && !run.fault(scenario.drop))
              events.push({
                ...event,
                attempts: event.attempts + 1,
                runAt: now + 10_000 * 2 ** Math.min(event.attempts, 6),
                seq: seq++,
              });
          },
        );
      case 'audit':
      case 'store':
        throw new Error('Not an invocation.');
    }
  };

  let hour = Math.floor(now / HOUR);
  let settledChecked = false;
  /** Every part settled within 31 minutes of the faults' end: checked once, when the run passes that time or ends. */
  const checkSettled = async () => {
    settledChecked = true;
    await invariants.settled(
      firestore.db,
      erasedAt,
      "within 31 minutes of the faults' end",
      now,
      faultsUntil,
    );
  };
  for (;;) {
    if (performance.now() > deadline) return null;
    const waiting = inFlight.filter((flight) => flight.current.wake !== null);
    const room = inFlight.length < MAX_IN_FLIGHT;
    const readyEvents = events.filter(
      (event) => event.runAt <= now && (room || event.kind === 'audit' || event.kind === 'store'),
    );
    const readyTasks = room ? tasks.ready(now) : [];
    const store = readyEvents.find((event) => event.kind === 'store');
    if (store?.kind === 'store') {
      events.splice(events.indexOf(store), 1);
      await firestore.db
        .collection(SIGNUPS)
        .doc(store.row)
        .create({ email: store.email, ...(store.club ? FINAL : HERO), created_at: new Date(now) });
      events.push({
        kind: 'trigger',
        row: store.row,
        runAt: now + Math.floor(rand() * 2_000),
        attempts: 0,
        seq: seq++,
      });
      continue;
    }
    const audit = readyEvents.find((event) => event.kind === 'audit');
    if (audit && inFlight.length === 0) {
      // Between invocations: the nets of every part, as the database holds them now.
      events.splice(events.indexOf(audit), 1);
      const unsettled = await invariants.audit(firestore.db, tasks, now);
      // Quiet for good: every part settled, no task, nobody still to sign up or unsubscribe, and nothing of an
      // erased mailbox left in MailerLite. The rest of the horizon would only run the scheduled jobs on nothing.
      const quiet =
        unsettled === 0 &&
        tasks.live.size === 0 &&
        !events.some((event) => ['store', 'trigger', 'erase', 'again', 'sync'].includes(event.kind)) &&
        ![...subscribers.keys()].some((email) => erasedAt.has(keyOf(email)));
      if (quiet) break;
      continue;
    }
    const startable = readyEvents.filter((event) => event.kind !== 'audit' && event.kind !== 'store');
    if (waiting.length + startable.length + readyTasks.length === 0) {
      if (inFlight.length > 0) throw new Error('An invocation neither ended nor waits at an outside call.');
      const nextAt = Math.min(...events.map((event) => event.runAt), tasks.nextAt());
      if (!Number.isFinite(nextAt) || nextAt > end) break;
      if (nextAt > settledBy && !settledChecked) await checkSettled();
      now = Math.max(now, nextAt);
    } else {
      // Any invocation waiting, or any event or task ready, may go next: the interleaving is the seed's.
      const pick = Math.floor(rand() * (waiting.length + startable.length + readyTasks.length));
      now += 10 + Math.floor(rand() * 190);
      if (pick < waiting.length) await resume((waiting[pick] as (typeof waiting)[number]).current);
      else if (pick < waiting.length + startable.length) {
        const event = startable[pick - waiting.length] as Event;
        events.splice(events.indexOf(event), 1);
        await start(event);
      } else await startTask(readyTasks[pick - waiting.length - startable.length] as SimTask);
    }
    const nowHour = Math.floor(now / HOUR);
    if (nowHour !== hour) {
      invariants.hourEnded(mails, hour);
      hour = nowHour;
    }
  }
  if (!settledChecked) await checkSettled();
  invariants.hourEnded(mails, hour);
  await invariants.atEnd(firestore.db, {
    rows,
    mails,
    subscribers,
    erasedAt,
    refusedMailbox,
    logText: logger.text(),
  });
  return {
    findings: invariants.findings,
    rows: rows.length,
    mails: mails.length,
    ms: Math.round(performance.now() - started),
    simulatedMs: now - T0,
  };
}

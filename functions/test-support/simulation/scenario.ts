// What one seed of the delivery simulation plays: the people and their sign-ups, the mail budget, the outages
// and the faults. A seed is the whole run: the scenario is drawn from it (fast-check), and so are the run's own
// choices (world.ts, random), so `npm run simulate -- --seed S` replays it.

import fc from 'fast-check';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
/** The run's start: on a clock hour, so the mail budget's hours are the simulation's. */
export const T0 = Date.UTC(2026, 10, 27, 9, 0, 0);

/** A provider many people share (one line of the mail budget), a catch-all school domain, or a domain of one. */
export type Domain = { kind: 'provider'; name: string } | { kind: 'school'; name: string } | { kind: 'own' };
const PROVIDERS = ['mail.example', 'inbox.example'];
const SCHOOLS = ['school-a.example', 'school-b.example'];

export type Spelling = 'bare' | 'capitals' | 'tagged';

export type SmtpOutage =
  | 'connect'
  | 'sender_refused'
  | 'login_refused'
  | 'rcpt_later'
  | 'relay_denied'
  | 'data_refused'
  | 'data_later'
  | 'reply_lost';
export type MailerLiteOutage = '401' | '403' | '404' | '429' | '5xx' | 'not_its_shape' | 'timeout_after';

export type Outage =
  | { service: 'smtp'; kind: SmtpOutage; from: number; to: number; share: number }
  | { service: 'mailerlite'; kind: MailerLiteOutage; from: number; to: number; share: number }
  | { service: 'firestore'; from: number; to: number; share: number }
  | { service: 'tasks'; from: number; to: number; share: number };

export interface Scenario {
  seed: number;
  /** Person i's domain; their address is kid<i>@<domain> (own domains: home<i>.example). */
  people: Domain[];
  signups: Array<{ person: number; spelling: Spelling; club: boolean; at: number }>;
  /** MAIL_PER_HOUR. */
  mailPerHour: number;
  /** The person whose own mailbox the relay (550 5.1.1 at RCPT) and MailerLite (422 on the email) refuse, or -1. */
  refused: number;
  /** People who press the unsubscribe link (again, until the page says done), ms after their first sign-up. */
  erasures: Array<{ person: number; after: number }>;
  /** Outages of the outside services, ms after T0; `share` is the chance each call fails in one. */
  outages: Outage[];
  /** Until when (ms after T0) the faults below fall, at these chances per call. */
  faultsUntil: number;
  dbBefore: number;
  dbAfter: number;
  enqueueBefore: number;
  enqueueAfter: number;
  /** An invocation dies at one of its outside calls. */
  crash: number;
  /** A failed trigger is not retried (its retries ended): the row is the reconciler's sweep's. */
  drop: number;
  /** A task delivered again after it succeeded, and two deliveries of one task running at once. */
  twice: number;
  concurrent: number;
  /** A task dispatched up to a minute late (so tasks run out of order). */
  late: number;
  /** The operator's Sync presses, ms after T0 (the Sync hands rows a new round of their contact part). */
  syncPresses: number[];
}

const domain: fc.Arbitrary<Domain> = fc.oneof(
  fc.constantFrom(...PROVIDERS).map((name): Domain => ({ kind: 'provider', name })),
  fc.constantFrom(...SCHOOLS).map((name): Domain => ({ kind: 'school', name })),
  fc.constant<Domain>({ kind: 'own' }),
);

const window = (most: number) =>
  fc
    .record({
      from: fc.integer({ min: 0, max: 3 * HOUR }),
      length: fc.integer({ min: 5 * MINUTE, max: most }),
    })
    .map(({ from, length }) => ({ from, to: from + length }));

const outage: fc.Arbitrary<Outage> = fc.oneof(
  fc
    .record({
      kind: fc.constantFrom<SmtpOutage>(
        'connect',
        'sender_refused',
        'login_refused',
        'rcpt_later',
        'relay_denied',
        'data_refused',
        'data_later',
        'reply_lost',
      ),
      at: window(6 * HOUR),
      share: fc.constantFrom(0.5, 1),
    })
    .map(({ kind, at, share }): Outage => ({ service: 'smtp', kind, ...at, share })),
  fc
    .record({
      kind: fc.constantFrom<MailerLiteOutage>(
        '401',
        '403',
        '404',
        '429',
        '5xx',
        'not_its_shape',
        'timeout_after',
      ),
      at: window(4 * HOUR),
      share: fc.constantFrom(0.5, 1),
    })
    .map(({ kind, at, share }): Outage => ({ service: 'mailerlite', kind, ...at, share })),
  fc
    .record({ at: window(30 * MINUTE), share: fc.constantFrom(0.3, 1) })
    .map(({ at, share }): Outage => ({ service: 'firestore', ...at, share })),
  fc
    .record({ at: window(2 * HOUR), share: fc.constantFrom(0.5, 1) })
    .map(({ at, share }): Outage => ({ service: 'tasks', ...at, share })),
);

/**
 * Most runs are small (20 to 40 rows), one in eight up to 200: the shared lines and a domain's share need many
 * rows, the faults and interleavings many runs.
 */
const rowCount = fc.oneof(
  { weight: 7, arbitrary: fc.integer({ min: 20, max: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 41, max: 200 }) },
);

const scenarios: fc.Arbitrary<Omit<Scenario, 'seed'>> = rowCount.chain((rows) =>
  fc.integer({ min: Math.ceil(rows / 3), max: rows }).chain((peopleCount) =>
    fc.record({
      people: fc.array(domain, { minLength: peopleCount, maxLength: peopleCount }),
      signups: fc.array(
        fc.record({
          person: fc.integer({ min: 0, max: peopleCount - 1 }),
          spelling: fc.constantFrom<Spelling>('bare', 'capitals', 'tagged'),
          club: fc.boolean(),
          at: fc.integer({ min: 0, max: 3 * HOUR }),
        }),
        { minLength: rows, maxLength: rows },
      ),
      // Roomy, or tight: every thank-you out within about six hours of budget.
      mailPerHour: fc.constantFrom(1_000, Math.max(4, Math.ceil(peopleCount / 6))),
      refused: fc.integer({ min: -1, max: peopleCount - 1 }),
      erasures: fc.array(
        fc.record({
          person: fc.integer({ min: 0, max: peopleCount - 1 }),
          after: fc.oneof(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 2 * HOUR })),
        }),
        { maxLength: 2 },
      ),
      outages: fc.array(outage, { maxLength: 3 }),
      faultsUntil: fc.integer({ min: 10 * MINUTE, max: 3 * HOUR }),
      dbBefore: fc.constantFrom(0, 0.02, 0.08),
      dbAfter: fc.constantFrom(0, 0.02, 0.08),
      enqueueBefore: fc.constantFrom(0, 0.1, 0.3),
      enqueueAfter: fc.constantFrom(0, 0.05),
      crash: fc.constantFrom(0, 0.03, 0.1),
      drop: fc.constantFrom(0, 0.5),
      twice: fc.constantFrom(0, 0.1),
      concurrent: fc.constantFrom(0, 0.1),
      late: fc.constantFrom(0, 0.3),
      syncPresses: fc.array(fc.integer({ min: 0, max: 4 * HOUR }), { maxLength: 2 }),
    }),
  ),
);

/** The scenario a seed plays. */
export function scenarioOf(seed: number): Scenario {
  const [drawn] = fc.sample(scenarios, { seed, numRuns: 1 });
  return { seed, ...(drawn as Omit<Scenario, 'seed'>) };
}

export function addressOf(scenario: Scenario, person: number, spelling: Spelling): string {
  const domain = scenario.people[person] as Domain;
  const host = domain.kind === 'own' ? `home${person}.example` : domain.name;
  if (spelling === 'capitals') return `Kid${person}@${host.toUpperCase()}`;
  return `kid${person}${spelling === 'tagged' ? '+goody' : ''}@${host}`;
}

/** When the last fault or outage ends (ms after T0). */
export function faultsEnd(scenario: Scenario): number {
  return Math.max(scenario.faultsUntil, ...scenario.outages.map((each) => each.to));
}

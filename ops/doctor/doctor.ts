// npm run doctor: the operator's launch check. Read-only: it reads settings, DNS, the relay (up to MAIL FROM,
// then RSET), MailerLite (GET only), the unsubscribe page (GET), the web build and the sign-ups' delivery
// state, and prints each check as pass, FAIL or cannot tell with the fix in one line. It exits 1 when a check
// fails; "cannot tell" does not fail it. Only --send-test sends anything: one thank-you, to the operator.
//
//   npm run doctor                          the running local stack (npm start)
//   npm run doctor -- --project <id>        a real project: functions/.env.<id>, Secret Manager, DNS
//   npm run doctor -- --project <id> --send-test you@your-domain
//   npm run doctor -- --project <id> --read-message thank-you.eml   (that mail, as your mailbox received it)
//
// docs/deploy.md, "The launch check", says what each check reads and what it cannot tell.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type App, deleteApp, initializeApp } from 'firebase-admin/app';
import { type Firestore, getFirestore } from 'firebase-admin/firestore';
import { checkDelivery, checkIndexes } from './delivery.ts';
import { checkSendingDomain, type DnsResolver, dnsResolver } from './domain.ts';
import { checkMailerLite } from './mailerlite.ts';
import { checkReceivedMessage } from './message.ts';
import { checkRelay } from './relay.ts';
import { type CheckResult, cannotTell, exitCode, formatResult, formatSummary } from './report.ts';
import { sendTest } from './send-test.ts';
import {
  type DoctorSetup,
  firebaseCliSecretReader,
  localSetup,
  projectSetup,
  type SecretName,
} from './setup.ts';
import { checkUnsubscribe, checkWebBuild } from './site.ts';

export const USAGE = `Usage: npm run doctor [-- options]

  (no options)            check the running local stack (npm start): stand-ins, emulators, local settings
  --project <id>          check a real project: functions/.env.<id>, its secrets (your firebase login),
                          DNS, the relay, MailerLite, the unsubscribe URL, web/dist, Firestore (your
                          gcloud application-default credentials)
  --send-test <address>   also send one real thank-you to <address> (yours), and say what to read in it
  --dkim-selector <name>  the DKIM selector your SMTP provider gave (its record is found only by it)
  --read-message <file>   read a received thank-you (.eml, "Show original" > "Download original"): its DKIM
                          signature, the receiver's verdict, the unsubscribe headers, no tracking
  --dns <server>          ask this DNS server (host or host:port), also without --project
  --help                  this text

Each check prints pass, FAIL or cannot tell; the exit code is 1 when any check fails.`;

const START_STACK = 'start the local stack (npm start), or give its GOODY_*_PORT settings';

export interface DoctorOptions {
  repoRoot: string;
  setup: DoctorSetup;
  resolver: DnsResolver | null;
  /** Why there is no resolver, for "cannot tell". */
  resolverMissing?: string;
  dkimSelector?: string;
  sendTo?: string;
  /** A received thank-you, as the mailbox saved it. */
  receivedMessage?: Buffer;
  firestore: Firestore | null;
  firestoreMissing?: string;
  now?: () => number;
  /** Called with each result as it is known. */
  report?: (result: CheckResult) => void;
}

/** Every check, in the order a sign-up's delivery meets them. */
export async function runDoctor(options: DoctorOptions): Promise<CheckResult[]> {
  const { setup } = options;
  const local = setup.mode === 'local';
  const results: CheckResult[] = [];
  const add = (...found: CheckResult[]) => {
    for (const result of found) {
      results.push(result);
      options.report?.(result);
    }
  };
  const secret = (name: SecretName, check: string): string | CheckResult => {
    const value = setup.secrets[name];
    if (value) return value;
    const problem = setup.secretProblems[name];
    return problem
      ? cannotTell(
          check,
          problem,
          "sign in with an account that may read the project's secrets: npx firebase login",
        )
      : '';
  };

  add(
    ...(await checkSendingDomain(setup.params.MAIL_FROM, {
      resolver: options.resolver,
      dkimSelector: options.dkimSelector,
      unavailable: options.resolverMissing,
    })),
  );

  const smtpUrl = secret('SMTP_URL', 'SMTP relay');
  if (typeof smtpUrl === 'object') add(smtpUrl);
  else {
    add(
      ...(await checkRelay(smtpUrl || undefined, setup.params.MAIL_FROM, {
        allowPlainLoopback: local,
        requireLogin: !local,
        ...(local ? { unreachableFix: START_STACK } : {}),
      })),
    );
  }

  const apiKey = secret('MAILERLITE_API_KEY', 'MailerLite: key');
  if (typeof apiKey === 'object') add(apiKey);
  else {
    add(
      ...(await checkMailerLite({
        baseUrl: setup.params.MAILERLITE_BASE_URL ?? '',
        apiKey: apiKey || undefined,
        groups: {
          MAILERLITE_GROUP_UPDATES: setup.params.MAILERLITE_GROUP_UPDATES ?? '',
          MAILERLITE_GROUP_CLUB: setup.params.MAILERLITE_GROUP_CLUB ?? '',
        },
        missingNamedGroupFails: !local,
        ...(local ? { unreachableFix: START_STACK } : {}),
      })),
    );
  }

  add(await checkUnsubscribe(setup.params.UNSUBSCRIBE_URL, { requireHttps: !local }));
  add(checkWebBuild(options.repoRoot, { local }));
  add(await checkIndexes(options.firestore, { emulator: local, unavailable: options.firestoreMissing }));
  add(await checkDelivery(options.firestore, (options.now ?? Date.now)(), options.firestoreMissing));

  if (options.sendTo) {
    add(
      await sendTest(options.sendTo, {
        smtpUrl: typeof smtpUrl === 'string' ? smtpUrl : undefined,
        mailFrom: setup.params.MAIL_FROM,
        unsubscribeUrl: setup.params.UNSUBSCRIBE_URL,
      }),
    );
  }
  if (options.receivedMessage) {
    add(
      ...(await checkReceivedMessage(options.receivedMessage, {
        resolver: options.resolver,
        resolverMissing: options.resolverMissing,
        unsubscribeUrl: setup.params.UNSUBSCRIBE_URL,
      })),
    );
  }
  return results;
}

/** firebase-admin's Firestore for the setup, or why there is none. */
async function openFirestore(
  setup: DoctorSetup,
): Promise<{ app?: App; db: Firestore | null; missing?: string }> {
  if (setup.mode === 'local') {
    const hostPort = setup.firestoreEmulatorHost ?? '127.0.0.1:8080';
    try {
      const response = await fetch(`http://${hostPort}/`, { signal: AbortSignal.timeout(3_000) });
      await response.arrayBuffer();
    } catch {
      return {
        db: null,
        missing: `the Firestore emulator does not answer on ${hostPort} (start the stack: npm start)`,
      };
    }
    process.env.FIRESTORE_EMULATOR_HOST = hostPort;
    const app = initializeApp({ projectId: setup.projectId }, 'goody-doctor');
    return { app, db: getFirestore(app) };
  }
  // A real project: the operator's application-default credentials, never an emulator.
  delete process.env.FIRESTORE_EMULATOR_HOST;
  const app = initializeApp({ projectId: setup.projectId }, 'goody-doctor');
  return { app, db: getFirestore(app) };
}

async function main(argv: string[]): Promise<number> {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const projectId = args.project?.trim();
  const setup = projectId
    ? await projectSetup(repoRoot, projectId, firebaseCliSecretReader(repoRoot))
    : localSetup(repoRoot, process.env);
  console.log(`doctor: ${projectId ? `project ${projectId}` : 'the local stack'}, from ${setup.source}\n`);
  const servers = (args.dns ?? [])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
  const resolver = servers.length > 0 || projectId ? dnsResolver(servers) : null;
  let receivedMessage: Buffer | undefined;
  if (args['read-message']) {
    try {
      receivedMessage = readFileSync(args['read-message']);
    } catch (error) {
      console.error(`doctor: cannot read ${args['read-message']}: ${(error as Error).message}`);
      return 2;
    }
  }
  const firestore = await openFirestore(setup);
  try {
    const results = await runDoctor({
      repoRoot,
      setup,
      resolver,
      resolverMissing: 'the local stack has no DNS for its sending domain (the internet is needed)',
      dkimSelector: args['dkim-selector'],
      sendTo: args['send-test'],
      receivedMessage,
      firestore: firestore.db,
      firestoreMissing: firestore.missing,
      report: (result) => console.log(formatResult(result)),
    });
    console.log(`\n${formatSummary(results)}`);
    return exitCode(results);
  } finally {
    if (firestore.app) await deleteApp(firestore.app);
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      project: { type: 'string' },
      'send-test': { type: 'string' },
      'dkim-selector': { type: 'string' },
      'read-message': { type: 'string' },
      dns: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  }).values;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error('doctor:', error);
      process.exit(2);
    },
  );
}

// npm run doctor: the operator's launch check. Read-only: it reads settings, DNS, the relay (up to MAIL FROM,
// then RSET), MailerLite (GET only), the unsubscribe page (GET), the web build and the sign-ups' delivery
// state, and prints each check as pass, FAIL or cannot tell with the fix in one line. It exits 1 when a check
// fails; "cannot tell" does not fail it. Only --send-test sends anything: one thank-you, to the operator.
//
//   npm run doctor                          the running local stack (npm start)
//   npm run doctor -- --project <id>        a real project: functions/.env.<id>, Secret Manager, DNS
//   npm run doctor -- --project <id> --send-test you@your-domain
//   npm run doctor -- --project <id> --read-message thank-you.eml   (that mail, as your mailbox received it)
//   SMTP_URL='smtps://…' npm run doctor -- --project <id>   (a secret from the environment, not Secret Manager)
//
// docs/deploy.md, "The launch check", says what each check reads and what it cannot tell.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type App, deleteApp, initializeApp } from 'firebase-admin/app';
import { type Firestore, getFirestore } from 'firebase-admin/firestore';
import { smtpUrlOptions } from '../../functions/src/mail/transport.ts';
import { checkDelivery, checkIndexes } from './delivery.ts';
import {
  checkSendingDomain,
  controlLookup,
  controlName,
  type DnsResolver,
  dnsResolver,
  senderDomain,
} from './domain.ts';
import { checkMailboxKeySecret, checkUnsubscribeSecret } from './keys.ts';
import { checkMailerLite } from './mailerlite.ts';
import { checkReceivedMessage } from './message.ts';
import { providerOf, type SmtpProvider } from './providers.ts';
import { checkRelay } from './relay.ts';
import {
  type CheckResult,
  cannotTell,
  exitCode,
  formatJson,
  formatResult,
  formatSummary,
  messageOf,
} from './report.ts';
import { sendTest } from './send-test.ts';
import {
  type DoctorSetup,
  firebaseCliSecretReader,
  localSetup,
  projectSetup,
  type SecretName,
} from './setup.ts';
import { checkServedAppCheck, checkUnsubscribe, servedSite } from './site.ts';

export const USAGE = `Usage: npm run doctor [-- options]

  (no options)            check the running local stack (npm start): stand-ins, emulators, local settings
  --project <id>          check a real project: functions/.env.<id>, its secrets (your firebase login),
                          DNS, the relay, MailerLite, the unsubscribe URL, the site it serves, Firestore
                          (your gcloud application-default credentials)
  --send-test <address>   also send one real thank-you to <address> (yours), and say what to read in it
  --dkim-selector <name>  the DKIM selector your SMTP provider gave (its record is found only by it)
  --bounce-domain <name>  the bounce (Return-Path) domain your SMTP provider sends with, when its own
                          (docs/deploy.md, SMTP providers): its SPF record is checked too
  --read-message <file>   read a received thank-you (.eml, "Show original" > "Download original"): its DKIM
                          signature, the receiver's verdict, the unsubscribe headers, no tracking
  --dns <server>          ask this DNS server (host or host:port), also without --project
  --site <url>            the site to read App Check from (default https://<id>.web.app/)
  --json                  print the results as one JSON document, for a pipeline
  --help                  this text

SMTP_URL, MAILERLITE_API_KEY, UNSUBSCRIBE_SECRET and MAILBOX_KEY_SECRET set in the environment are used
instead of Secret Manager's (or the local stack's); they are never printed.

Each check prints pass, FAIL or cannot tell. Exit code 0: nothing failed ("cannot tell" does not fail);
1: a check failed; 2: a usage error.`;

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
  /** The relay's bounce (Return-Path) domain, when it uses its own: its SPF is checked too. */
  bounceDomain?: string;
  /** The site whose App Check key is read (a project's; default https://<id>.web.app/). */
  siteUrl?: string;
  now?: () => number;
  /** Called with each result as it is known. */
  report?: (result: CheckResult) => void;
}

/** The SMTP provider SMTP_URL's host names, if the check knows it (an unreadable URL: the relay check says so). */
function relayProvider(smtpUrl: string): SmtpProvider | undefined {
  try {
    return providerOf(smtpUrlOptions(smtpUrl).host);
  } catch {
    return undefined;
  }
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
    if (!problem) return '';
    return cannotTell(
      check,
      problem,
      local
        ? START_STACK
        : `sign in with an account that may read the project's secrets (npx firebase login), or set ${name} in the environment`,
    );
  };

  // Whether DNS works at all: a service not reached is then not a wrong setting.
  const domain = senderDomain(setup.params.MAIL_FROM ?? '') ?? 'com';
  const offline = options.resolver ? await controlLookup(options.resolver, controlName(domain)) : null;

  const smtpUrl = secret('SMTP_URL', 'SMTP relay');
  add(
    ...(await checkSendingDomain(setup.params.MAIL_FROM, {
      resolver: options.resolver,
      dkimSelector: options.dkimSelector,
      unavailable: options.resolverMissing,
      provider: typeof smtpUrl === 'string' ? relayProvider(smtpUrl) : undefined,
      bounceDomain: options.bounceDomain,
    })),
  );

  if (typeof smtpUrl === 'object') add(smtpUrl);
  else {
    add(
      ...(await checkRelay(smtpUrl || undefined, setup.params.MAIL_FROM, {
        allowPlainLoopback: local,
        requireLogin: !local,
        offline,
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

  const unsubscribeSecret = secret('UNSUBSCRIBE_SECRET', 'key: UNSUBSCRIBE_SECRET');
  add(typeof unsubscribeSecret === 'object' ? unsubscribeSecret : checkUnsubscribeSecret(unsubscribeSecret));
  const mailboxSecret = secret('MAILBOX_KEY_SECRET', 'key: MAILBOX_KEY_SECRET');
  add(
    typeof mailboxSecret === 'object'
      ? mailboxSecret
      : await checkMailboxKeySecret(mailboxSecret, options.firestore, options.firestoreMissing),
  );
  add(await checkUnsubscribe(setup.params.UNSUBSCRIBE_URL, { requireHttps: !local, offline }));
  add(
    await checkServedAppCheck(options.siteUrl ?? servedSite(setup.projectId), {
      local,
      // As firebase-functions reads a boolean param: only the exact value "true" turns it on.
      enforce: setup.params.ENFORCE_APP_CHECK === 'true',
    }),
  );
  add(await checkIndexes(options.firestore, { emulator: local, unavailable: options.firestoreMissing }));
  add(
    await checkDelivery(options.firestore, {
      now: (options.now ?? Date.now)(),
      mailPerHour: Number(setup.params.MAIL_PER_HOUR),
      unavailable: options.firestoreMissing,
    }),
  );

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
    const hostPort = setup.firestoreEmulatorHost;
    if (!hostPort) return { db: null, missing: 'no running local stack (start it: npm start)' };
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
  const json = Boolean(args.json);
  // With --json, stdout holds the one document; what is said along the way goes to stderr.
  const say = json ? (line: string) => console.error(line) : (line: string) => console.log(line);
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const projectId = args.project?.trim();
  const setup = projectId
    ? await projectSetup(repoRoot, projectId, firebaseCliSecretReader(repoRoot), process.env)
    : localSetup(repoRoot, process.env);
  say(`doctor: ${projectId ? `project ${projectId}` : 'the local stack'}, from ${setup.source}\n`);
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
      bounceDomain: args['bounce-domain'],
      sendTo: args['send-test'],
      receivedMessage,
      firestore: firestore.db,
      firestoreMissing: firestore.missing,
      siteUrl: args.site,
      report: (result) => say(formatResult(result)),
    });
    say(`\n${formatSummary(results)}`);
    if (json) console.log(formatJson(results, { project: projectId ?? null, source: setup.source }));
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
      'bounce-domain': { type: 'string' },
      'read-message': { type: 'string' },
      dns: { type: 'string', multiple: true },
      site: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  }).values;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      // The message's first line only: an error's other fields may hold what it was given.
      console.error(`doctor: ${messageOf(error)}`);
      process.exit(2);
    },
  );
}

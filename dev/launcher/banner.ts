// The one block `npm start` (and `npm run dev`) prints once everything answers: where the site is and where its
// side effects land.

import path from 'node:path';
import type { LauncherConfig } from './config.ts';
import type { RunningStandIns } from './stand-ins.ts';

export interface BannerInfo {
  config: LauncherConfig;
  standIns: RunningStandIns;
  siteUrl: string;
  functionsBaseUrl: string;
  /** The functions the emulator loaded; undefined when it failed to load them. */
  functions: string[] | undefined;
  /** The scheduled functions the launcher fires (scheduler.ts), each with where its schedule comes from. */
  scheduled: string[];
}

/** npm run dev: what reloads on its own, and what Hosting would add that this page does not have. */
const DEV_ROWS: [string, string][] = [
  ['Page', "Vite's dev server: a save under web/src shows in the open page (hot module replacement)"],
  [
    'Reload',
    'a save under functions/src: tsc --watch compiles it, the Functions emulator reloads it (no restart)',
  ],
  ['No Hosting', "the built site's Content-Security-Policy and landing bootstrap: npm start serves them"],
];

export function formatReadyBanner({
  config,
  standIns,
  siteUrl,
  functionsBaseUrl,
  functions,
  scheduled,
}: BannerInfo) {
  const { dev, host, ports } = config;
  const { smtp } = standIns;
  const mailDir = path.relative(config.repoRoot, smtp.dir);
  const rows: [string, string][] = [
    ['Site', siteUrl],
    ['Admin', `${siteUrl}/admin`],
    ...(dev ? DEV_ROWS : []),
    [
      'Mail',
      `lands in ${mailDir && !mailDir.startsWith('..') && !path.isAbsolute(mailDir) ? mailDir : smtp.dir} (SMTP ${smtp.url}); listed at ${smtp.apiUrl}`,
    ],
    ['MailerLite', `stand-in at ${standIns.mailerLite.baseUrl} (API key ${config.mailerLiteApiKey})`],
    ['Firestore', `Firebase Firestore emulator at ${host}:${ports.firestore}, enforcing firestore.rules`],
    [
      'Functions',
      functions
        ? `${functionsBaseUrl}/<name> (${functions.join(', ') || 'none exported'})`
        : `${functionsBaseUrl}: FAILED to load, see the [firebase] lines above (it reloads when functions/lib changes)`,
    ],
    ['Pub/Sub', `Firebase Pub/Sub emulator at ${host}:${ports.pubsub} (the scheduled functions' topics)`],
    [
      'Schedules',
      scheduled.length > 0
        ? `the launcher fires ${scheduled.join(', ')}, as Cloud Scheduler would`
        : 'none loaded',
    ],
    ['Tasks', `Firebase Cloud Tasks emulator at ${host}:${ports.tasks} (the task queues)`],
  ];
  const rule = '─'.repeat(72);
  return [
    rule,
    dev
      ? 'GOODY is running offline for development (npm run dev). Ctrl-C stops everything.'
      : 'GOODY is running offline. Ctrl-C stops everything.',
    `  Google's Firebase emulators: ${dev ? '' : 'Hosting, '}Functions, Firestore, Pub/Sub, Cloud Tasks. Stand-ins: MailerLite, SMTP.`,
    ...rows.map(([name, value]) => `  ${name.padEnd(11)} ${value}`),
    rule,
  ].join('\n');
}

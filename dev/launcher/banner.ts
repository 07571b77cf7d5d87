// The one block `npm start` (and `npm run dev`) prints once everything answers: where the site is and where its
// side effects land.

import path from 'node:path';
import type { SiteServer } from './config.ts';

export type FunctionsState =
  | { state: 'loaded'; baseUrl: string; names: string[] }
  | { state: 'failed'; baseUrl: string };

export interface BannerInfo {
  repoRoot: string;
  /** Who serves the page: Hosting a built site (npm start), or Vite's dev server (npm run dev). */
  server: SiteServer;
  siteUrl: string;
  mailDir: string;
  smtpUrl: string;
  smtpApiUrl: string;
  mailerLiteBaseUrl: string;
  mailerLiteApiKey: string;
  firestoreHostPort: string;
  pubsubHostPort: string;
  tasksHostPort: string;
  functions: FunctionsState;
  /** The scheduled functions the launcher fires (scheduler.ts), each with where its schedule comes from. */
  scheduled?: string[];
}

function displayPath(repoRoot: string, dir: string): string {
  const relative = path.relative(repoRoot, dir);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : dir;
}

function functionsLine(functions: FunctionsState): string {
  switch (functions.state) {
    case 'loaded':
      return `${functions.baseUrl}/<name> (${functions.names.join(', ') || 'none exported'})`;
    case 'failed':
      return `${functions.baseUrl}: FAILED to load, see the [firebase] lines above (it reloads when functions/lib changes)`;
  }
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

export function formatReadyBanner(info: BannerInfo): string {
  const dev = info.server === 'vite';
  const rows: [string, string][] = [
    ['Site', info.siteUrl],
    ['Admin', `${info.siteUrl}/admin`],
    ...(dev ? DEV_ROWS : []),
    [
      'Mail',
      `lands in ${displayPath(info.repoRoot, info.mailDir)} (SMTP ${info.smtpUrl}); listed at ${info.smtpApiUrl}`,
    ],
    ['MailerLite', `stand-in at ${info.mailerLiteBaseUrl} (API key ${info.mailerLiteApiKey})`],
    ['Firestore', `Firebase Firestore emulator at ${info.firestoreHostPort}, enforcing firestore.rules`],
    ['Functions', functionsLine(info.functions)],
    ['Pub/Sub', `Firebase Pub/Sub emulator at ${info.pubsubHostPort} (the scheduled functions' topics)`],
    [
      'Schedules',
      info.scheduled?.length
        ? `the launcher fires ${info.scheduled.join(', ')}, as Cloud Scheduler would`
        : 'none loaded',
    ],
    ['Tasks', `Firebase Cloud Tasks emulator at ${info.tasksHostPort} (the task queues)`],
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

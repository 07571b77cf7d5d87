// The one block `npm start` prints once everything answers: where the site is and where its side effects land.

import path from 'node:path';

export type FunctionsState =
  | { state: 'loaded'; baseUrl: string; names: string[] }
  | { state: 'failed'; baseUrl: string };

export interface BannerInfo {
  repoRoot: string;
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

export function formatReadyBanner(info: BannerInfo): string {
  const rows: [string, string][] = [
    ['Site', info.siteUrl],
    ['Admin', `${info.siteUrl}/admin`],
    [
      'Mail',
      `lands in ${displayPath(info.repoRoot, info.mailDir)} (SMTP ${info.smtpUrl}); listed at ${info.smtpApiUrl}`,
    ],
    ['MailerLite', `stand-in at ${info.mailerLiteBaseUrl} (API key ${info.mailerLiteApiKey})`],
    ['Firestore', `Firebase Firestore emulator at ${info.firestoreHostPort}, enforcing firestore.rules`],
    ['Functions', functionsLine(info.functions)],
    ['Pub/Sub', `Firebase Pub/Sub emulator at ${info.pubsubHostPort} (triggers the scheduled functions)`],
    ['Tasks', `Firebase Cloud Tasks emulator at ${info.tasksHostPort} (the task queues)`],
  ];
  const rule = '─'.repeat(72);
  return [
    rule,
    'GOODY is running offline. Ctrl-C stops everything.',
    "  Google's Firebase emulators: Hosting, Functions, Firestore, Pub/Sub, Cloud Tasks. Stand-ins: MailerLite, SMTP.",
    ...rows.map(([name, value]) => `  ${name.padEnd(11)} ${value}`),
    rule,
  ].join('\n');
}

// tsx dev/mailerlite/cli.ts [--port 3080] [--host 127.0.0.1] [--key dev-mailerlite-key] [--window-ms 60000]
//   [--requests-per-window 120] [--imports-per-window 5] [--import-delay-ms 100] [--custom-fields a,b]
//   [--fractional-retry-after] [--quiet]

import { parseArgs } from 'node:util';
import { startMailerLiteStandIn } from './index.ts';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '3080' },
    key: { type: 'string', default: 'dev-mailerlite-key' },
    'window-ms': { type: 'string' },
    'requests-per-window': { type: 'string' },
    'imports-per-window': { type: 'string' },
    'import-delay-ms': { type: 'string' },
    'custom-fields': { type: 'string' },
    'fractional-retry-after': { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  },
});

function numberOption(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) {
    console.error(`--${name} must be a number, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

try {
  const standIn = await startMailerLiteStandIn({
    host: values.host,
    port: numberOption('port', values.port),
    apiKey: values.key,
    windowMs: numberOption('window-ms', values['window-ms']),
    requestsPerWindow: numberOption('requests-per-window', values['requests-per-window']),
    importsPerWindow: numberOption('imports-per-window', values['imports-per-window']),
    importDelayMs: numberOption('import-delay-ms', values['import-delay-ms']),
    customFields: values['custom-fields']?.split(',').filter(Boolean),
    fractionalRetryAfter: values['fractional-retry-after'],
    quiet: values.quiet,
  });
  const { limits } = standIn;
  console.log(
    `MailerLite stand-in at ${standIn.baseUrl} (${limits.requestsPerWindow} requests and ` +
      `${limits.importsPerWindow} imports per ${limits.windowMs} ms; control under ${standIn.url}/__control/)`,
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    standIn.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`MailerLite stand-in did not stop cleanly after ${signal}:`, error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (error) {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    console.error(`MailerLite stand-in: port ${values.port} on ${values.host} is already in use.`);
  } else {
    console.error('MailerLite stand-in failed to start:', error);
  }
  process.exit(1);
}

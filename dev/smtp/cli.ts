// tsx dev/smtp/cli.ts [--port 2525] [--api-port 8025] [--host 127.0.0.1] [--dir <repo>/.dev-data/mail] [--quiet]

import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startSmtpOutbox } from './index.ts';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '2525' },
    'api-port': { type: 'string', default: '8025' },
    dir: { type: 'string', default: fileURLToPath(new URL('../../.dev-data/mail', import.meta.url)) },
    quiet: { type: 'boolean', default: false },
  },
});

function portOption(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65_535) {
    console.error(`--${name} must be a port number, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

const port = portOption('port', values.port);
const apiPort = portOption('api-port', values['api-port']);

try {
  const outbox = await startSmtpOutbox({
    host: values.host,
    port,
    apiPort,
    dir: values.dir,
    quiet: values.quiet,
  });
  console.log(
    `SMTP outbox at ${outbox.url}, messages in ${outbox.dir}, API at ${outbox.apiUrl}/api/messages`,
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    outbox.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`SMTP outbox did not stop cleanly after ${signal}:`, error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (error) {
  const { code, port: busyPort } = error as NodeJS.ErrnoException & { port?: number };
  if (code === 'EADDRINUSE') {
    console.error(
      `SMTP outbox: port ${busyPort ?? `${port} or ${apiPort}`} on ${values.host} is already in use.`,
    );
  } else {
    console.error('SMTP outbox failed to start:', error);
  }
  process.exit(1);
}

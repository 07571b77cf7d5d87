// Runs the Firestore stand-in on its own:
//   tsx dev/firestore/cli.ts [--host 127.0.0.1] [--port 8080] [--project demo-goody]
//                            [--import dir] [--export-on-exit dir] [--quiet]
// Stops cleanly on SIGINT / SIGTERM, exporting first when --export-on-exit is given.
import { parseArgs } from 'node:util';
import { startFirestoreStandIn } from './index.ts';

const USAGE =
  'Usage: tsx dev/firestore/cli.ts [--host 127.0.0.1] [--port 8080] [--project demo-goody] [--import dir] [--export-on-exit dir] [--quiet]';

async function main(): Promise<void> {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse().values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be a port number, not "${values.port}".\n${USAGE}`);
    process.exit(2);
  }
  let standIn: Awaited<ReturnType<typeof startFirestoreStandIn>>;
  try {
    standIn = await startFirestoreStandIn({
      host: values.host,
      port,
      projectId: values.project,
      importDir: values.import,
      exportOnExit: values['export-on-exit'],
      quiet: values.quiet,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      console.error(
        `Firestore stand-in: port ${port} on ${values.host} is already in use. Stop what uses it or pass --port.`,
      );
    } else {
      console.error((error as Error).message);
    }
    process.exit(1);
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    if (!values.quiet) console.log(`Firestore stand-in: ${signal}, stopping.`);
    standIn.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`Firestore stand-in: stopping failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

function parse() {
  return parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8080' },
      project: { type: 'string' },
      import: { type: 'string' },
      'export-on-exit': { type: 'string' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
}

await main();

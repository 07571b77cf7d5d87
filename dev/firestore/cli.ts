// Runs the Firestore stand-in on its own:
//   tsx dev/firestore/cli.ts [--host 127.0.0.1] [--port 8080] [--project demo-goody] [--data dir] [--quiet]
// Stops cleanly on SIGINT / SIGTERM, writing its data to --data first.
import { parseArgs } from 'node:util';
import { startFirestoreStandIn } from './index.ts';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8080' },
    project: { type: 'string' },
    data: { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});
const port = Number(values.port);
try {
  const standIn = await startFirestoreStandIn({
    host: values.host,
    port,
    projectId: values.project,
    dataDir: values.data,
    quiet: values.quiet,
  });
  const stop = () => standIn.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
  console.error(
    inUse
      ? `Firestore stand-in: port ${port} on ${values.host} is already in use. Stop what uses it or pass --port.`
      : `Firestore stand-in: ${(error as Error).message}`,
  );
  process.exit(1);
}

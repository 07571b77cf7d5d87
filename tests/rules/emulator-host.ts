export interface HostAndPort {
  host: string;
  port: number;
}

/**
 * Reads `host:port` from FIRESTORE_EMULATOR_HOST, the variable `firebase emulators:exec` sets for the
 * command it runs. Throws a message that says how to run the suite when it is missing or malformed.
 */
export function firestoreEmulatorFromEnv(env: NodeJS.ProcessEnv): HostAndPort {
  const value = env.FIRESTORE_EMULATOR_HOST?.trim();
  if (!value) {
    throw new Error(
      'FIRESTORE_EMULATOR_HOST is not set. Run the rules tests with `npm run test:rules`, which starts the ' +
        'Firebase Firestore emulator (Java 21 or later) and sets it.',
    );
  }
  return parseHostAndPort(value, 'FIRESTORE_EMULATOR_HOST');
}

export function parseHostAndPort(value: string, name: string): HostAndPort {
  let url: URL;
  try {
    url = new URL(`http://${value}`);
  } catch {
    throw new Error(`${name}=${value} is not host:port`);
  }
  const port = Number(url.port);
  if (!url.hostname || !url.port || !Number.isInteger(port) || url.pathname !== '/' || url.search) {
    throw new Error(`${name}=${value} is not host:port`);
  }
  // URL keeps the brackets of an IPv6 literal; sockets and the SDKs want the bare address.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

/**
 * Environment that keeps Google's client libraries on this machine. Without it, firebase-admin's auth
 * library probes the GCE metadata server (169.254.169.254) to learn where it runs; locally and in tests
 * nothing may leave loopback, so detection is off and any direct lookup goes to a closed loopback port.
 */
export const loopbackOnlyEnv = {
  METADATA_SERVER_DETECTION: 'none',
  GCE_METADATA_HOST: '127.0.0.1:9',
} as const;

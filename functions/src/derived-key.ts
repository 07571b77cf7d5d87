import { hkdfSync } from 'node:crypto';

const derived = new Map<string, Buffer>();

/**
 * A key for one purpose, derived from a secret with HKDF-SHA-256 (32 bytes), so the secret itself keys
 * nothing and no two purposes share a key: the mailbox key (privacy/mailbox-key.ts), the task ids
 * (delivery/queue.ts), the unsubscribe link's seal and MAC (privacy/unsubscribe-token.ts). Made once per
 * secret and purpose in an instance.
 */
export function derivedKey(secret: string, salt: string, info: string): Buffer {
  const name = JSON.stringify([secret, salt, info]);
  let key = derived.get(name);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secret, salt, info, 32));
    derived.set(name, key);
  }
  return key;
}

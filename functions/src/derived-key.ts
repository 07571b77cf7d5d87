import { hkdfSync } from 'node:crypto';

const derived = new Map<string, Buffer>();

/** A key for one purpose (HKDF-SHA-256), so no two purposes share one; cached per secret and purpose. */
export function derivedKey(secret: string, salt: string, info: string): Buffer {
  const name = JSON.stringify([secret, salt, info]);
  if (!derived.has(name)) derived.set(name, Buffer.from(hkdfSync('sha256', secret, salt, info, 32)));
  return derived.get(name) as Buffer;
}

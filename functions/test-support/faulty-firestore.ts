// A Firestore of the functions' tests that fails where a test says: the emulator's own database (real reads,
// writes and transactions), with a fault asked before each call a document reference makes. What the code
// under test reaches through `db.collection(…).doc(…)` (and the references of what it reads) goes through it.

import type { Firestore } from 'firebase-admin/firestore';

export type DocumentCall = 'get' | 'create' | 'set' | 'update' | 'delete';

/** Asked before each call: an error to throw instead of making it, or undefined to make it. */
export type Fault = (call: DocumentCall, path: string) => Error | undefined;

/** An error as the Admin SDK throws it when Firestore does not answer (gRPC UNAVAILABLE). */
export function unavailable(): Error {
  return Object.assign(new Error('14 UNAVAILABLE: injected'), { code: 14 });
}

const CALLS: ReadonlySet<string> = new Set(['get', 'create', 'set', 'update', 'delete']);

export function faultyFirestore(db: Firestore, fault: Fault): Firestore {
  const wrapped = new WeakMap<object, object>();
  const wrap = <T extends object>(target: T): T => {
    const known = wrapped.get(target);
    if (known) return known as T;
    const proxy = new Proxy(target, {
      get(object, property, receiver) {
        const value = Reflect.get(object, property, receiver);
        if (typeof value !== 'function') return value;
        const isDocument = 'path' in object && 'parent' in object && 'collection' in object;
        if (isDocument && typeof property === 'string' && CALLS.has(property)) {
          return (...args: unknown[]) => {
            const error = fault(property as DocumentCall, (object as { path: string }).path);
            if (error) return Promise.reject(error);
            return value.apply(object, args);
          };
        }
        if (property === 'collection' || property === 'doc') {
          return (...args: unknown[]) => wrap(value.apply(object, args));
        }
        return value.bind(object);
      },
    });
    wrapped.set(target, proxy);
    return proxy;
  };
  return wrap(db);
}

// A Firestore of the functions' tests that fails where a test says: the emulator's own database (real reads,
// writes and transactions), with a fault asked before each call a document reference or the database makes.
// What the code under test reaches through `db.collection(…).doc(…)`, the references of the documents it
// reads that way, and `runTransaction` (on the database or on such a reference's `firestore`) go through it;
// queries do not.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Firestore } from 'firebase-admin/firestore';

export type DocumentCall = 'get' | 'create' | 'set' | 'update' | 'delete' | 'transaction';

/**
 * Asked before each call: `before` (an error) fails it without making it; `after` (an error) makes it and
 * then fails, as a write whose answer was lost after it applied; undefined makes it.
 */
export type Fault = (
  call: DocumentCall,
  path: string,
) => { before?: Error; after?: Error } | Error | undefined;

/** An error as the Admin SDK throws it when Firestore does not answer (gRPC UNAVAILABLE). */
export function unavailable(): Error {
  return Object.assign(new Error('14 UNAVAILABLE: injected'), { code: 14 });
}

const CALLS: ReadonlySet<string> = new Set(['get', 'create', 'set', 'update', 'delete']);

export interface FaultyOptions {
  /**
   * Awaited before each call, but not inside a transaction (whose callback must not wait on others while
   * the emulator holds its locks): a simulation's scheduler lets other work go first there.
   */
  yieldBefore?: () => Promise<void>;
}

export function faultyFirestore(db: Firestore, fault: Fault, options: FaultyOptions = {}): Firestore {
  const wrapped = new WeakMap<object, object>();
  const inTransaction = new AsyncLocalStorage<boolean>();
  const ask = async <T>(call: DocumentCall, path: string, make: () => Promise<T>): Promise<T> => {
    if (options.yieldBefore && !inTransaction.getStore()) await options.yieldBefore();
    const answer = fault(call, path);
    const { before, after } = answer instanceof Error ? { before: answer, after: undefined } : (answer ?? {});
    if (before) throw before;
    const result = await (call === 'transaction' ? inTransaction.run(true, make) : make());
    if (after) throw after;
    return result;
  };
  const wrap = <T extends object>(target: T): T => {
    const known = wrapped.get(target);
    if (known) return known as T;
    const isDocument = 'path' in target && 'parent' in target && 'collection' in target;
    const isSnapshot = 'exists' in target && 'ref' in target && 'data' in target;
    const proxy = new Proxy(target, {
      get(object, property, receiver) {
        const value = Reflect.get(object, property, receiver);
        if (isSnapshot && property === 'ref') return wrap(value as object);
        if (isDocument && property === 'firestore') return root;
        if (typeof value !== 'function') return value;
        if (isDocument && typeof property === 'string' && CALLS.has(property)) {
          const path = (object as { path: string }).path;
          return async (...args: unknown[]) => {
            const result = await ask(property as DocumentCall, path, () => value.apply(object, args));
            return property === 'get' ? wrap(result as object) : result;
          };
        }
        if (object === db && property === 'runTransaction') {
          return (...args: unknown[]) => ask('transaction', '', () => value.apply(object, args));
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
  const root = wrap(db);
  return root;
}

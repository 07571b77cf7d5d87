// A Firestore of the functions' tests that fails where a test says: the emulator's own database (real reads,
// writes and transactions), with a fault asked before each outside call the code under test makes through it:
// a document reference's reads and writes, a query's `get` (a collection, `where`, `orderBy`, `limit`, cursors,
// `count()`), the database's `getAll`, a write batch's `commit` and `runTransaction` (on the database or on such
// a reference's `firestore`). What a transaction reads and writes inside its callback is the transaction's one
// call (its callback's own document calls, rare, are asked without a yield). References reached from snapshots (a
// document's, a query's documents') go through it too.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Firestore } from 'firebase-admin/firestore';

export type DocumentCall =
  | 'get'
  | 'create'
  | 'set'
  | 'update'
  | 'delete'
  | 'transaction'
  | 'query'
  | 'getAll'
  | 'batch';

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
/** What makes a query from a query (or a collection): the result is wrapped, so its `get` is asked. */
const QUERY_BUILDERS: ReadonlySet<string> = new Set([
  'where',
  'orderBy',
  'limit',
  'limitToLast',
  'offset',
  'startAt',
  'startAfter',
  'endAt',
  'endBefore',
  'select',
  'count',
]);

export interface FaultyOptions {
  /**
   * Awaited before each call, but not inside a transaction (whose callback must not wait on others while
   * the emulator holds its locks): a simulation's scheduler lets other work go first there.
   */
  yieldBefore?: () => Promise<void>;
}

/** Set inside a transaction's callback. One for all: each AsyncLocalStorage ever entered costs every promise. */
const inTransaction = new AsyncLocalStorage<boolean>();

export function faultyFirestore(db: Firestore, fault: Fault, options: FaultyOptions = {}): Firestore {
  const wrapped = new WeakMap<object, object>();
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
    const isQuerySnapshot = 'docs' in target && 'size' in target && 'query' in target;
    const isQuery = !isDocument && typeof (target as { where?: unknown }).where === 'function';
    const isAggregate =
      !isQuery && 'query' in target && typeof (target as { get?: unknown }).get === 'function';
    const isBatch = typeof (target as { commit?: unknown }).commit === 'function' && 'set' in target;
    const proxy = new Proxy(target, {
      get(object, property, receiver) {
        const value = Reflect.get(object, property, receiver);
        if (isSnapshot && property === 'ref') return wrap(value as object);
        if (isQuerySnapshot && property === 'docs') return (value as object[]).map((each) => wrap(each));
        if (isDocument && property === 'firestore') return root;
        if (typeof value !== 'function') return value;
        if (isDocument && typeof property === 'string' && CALLS.has(property)) {
          const path = (object as { path: string }).path;
          return async (...args: unknown[]) => {
            const result = await ask(property as DocumentCall, path, () => value.apply(object, args));
            return property === 'get' ? wrap(result as object) : result;
          };
        }
        if ((isQuery || isAggregate) && property === 'get') {
          return async (...args: unknown[]) =>
            wrap((await ask('query', '', () => value.apply(object, args))) as object);
        }
        if (isBatch && property === 'commit') {
          return (...args: unknown[]) => ask('batch', '', () => value.apply(object, args));
        }
        if (object === db && property === 'runTransaction') {
          return (...args: unknown[]) => ask('transaction', '', () => value.apply(object, args));
        }
        if (object === db && property === 'getAll') {
          return async (...args: unknown[]) =>
            ((await ask('getAll', '', () => value.apply(object, args))) as object[]).map((each) =>
              wrap(each),
            );
        }
        if (
          property === 'collection' ||
          property === 'doc' ||
          (object === db && property === 'batch') ||
          (isQuery && typeof property === 'string' && QUERY_BUILDERS.has(property))
        ) {
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

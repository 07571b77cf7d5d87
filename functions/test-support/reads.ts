// Counts the document reads Firestore would bill a piece of code for, through firebase-admin itself: every
// Query.get (the documents returned, at least 1: an empty result is billed as one read), Firestore.getAll
// (one per reference; DocumentReference.get goes through it) and Transaction.get (1) made while it is on.
// It patches the SDK's prototypes, so it counts every Firestore instance of this process: turn it on around
// the code measured only.

import type { Firestore, Query, QuerySnapshot, Transaction } from 'firebase-admin/firestore';

export interface ReadCounter {
  readonly reads: number;
  stop(): void;
}

export function countReads(db: Firestore): ReadCounter {
  const counter = { reads: 0 };
  // A collection reference is a Query; Query.prototype holds get().
  const queryProto = Object.getPrototypeOf(Object.getPrototypeOf(db.collection('c'))) as Query;
  const dbProto = Object.getPrototypeOf(db) as Firestore;
  const restore: Array<() => void> = [];
  const patch = <T extends object>(
    proto: T,
    name: keyof T & string,
    count: (result: unknown, args: unknown[]) => number,
  ) => {
    const original = proto[name] as unknown as (...args: unknown[]) => Promise<unknown>;
    (proto as Record<string, unknown>)[name] = async function (this: unknown, ...args: unknown[]) {
      const result = await original.apply(this, args);
      counter.reads += count(result, args);
      return result;
    };
    restore.push(() => {
      (proto as Record<string, unknown>)[name] = original;
    });
  };
  patch(queryProto, 'get', (result) => Math.max(1, (result as QuerySnapshot).size));
  patch(
    dbProto,
    'getAll',
    (_result, args) => args.filter((arg) => typeof arg === 'object' && arg !== null && 'path' in arg).length,
  );
  // Transactions: their prototype is reached through one, so runTransaction is wrapped to patch it once.
  const originalRun = dbProto.runTransaction;
  let transactionPatched = false;
  (dbProto as unknown as Record<string, unknown>).runTransaction = function (
    this: Firestore,
    update: (t: Transaction) => unknown,
    ...rest: unknown[]
  ) {
    return (originalRun as (...args: unknown[]) => Promise<unknown>).call(
      this,
      (transaction: Transaction) => {
        if (!transactionPatched) {
          transactionPatched = true;
          patch(Object.getPrototypeOf(transaction) as Transaction, 'get', (result) =>
            typeof (result as QuerySnapshot).size === 'number'
              ? Math.max(1, (result as QuerySnapshot).size)
              : 1,
          );
        }
        return update(transaction);
      },
      ...rest,
    );
  };
  restore.push(() => {
    (dbProto as unknown as Record<string, unknown>).runTransaction = originalRun;
  });
  return {
    get reads() {
      return counter.reads;
    },
    stop() {
      for (const undo of restore.reverse()) undo();
    },
  };
}

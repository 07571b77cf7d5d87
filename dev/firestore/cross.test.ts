// One engine behind both protocols: what the web app writes over REST, firebase-admin reads over gRPC
// (on the same port), and the other way round, transactions included.

import {
  addDoc,
  collection,
  doc,
  getDoc,
  getDocs,
  orderBy,
  query,
  runTransaction,
  serverTimestamp,
  Timestamp,
} from 'firebase/firestore/lite';
import { Timestamp as AdminTimestamp, FieldValue } from 'firebase-admin/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FirestoreStandIn, startFirestoreStandIn } from './index.ts';
import { type AdminClient, adminClient, deferred, type LiteClient, liteClient } from './test-support.ts';

const PROJECT = 'demo-cross-tests';
let standIn: FirestoreStandIn;
let lite: LiteClient;
let admin: AdminClient;

beforeAll(async () => {
  standIn = await startFirestoreStandIn({ quiet: true, projectId: PROJECT });
  lite = liteClient(standIn, PROJECT, 'cross-lite');
  admin = adminClient(standIn, PROJECT, 'cross-admin');
});

afterAll(async () => {
  await Promise.all([lite.close(), admin.close()]);
  await standIn.stop();
});

beforeEach(() => standIn.reset());

describe('both protocols on one port', () => {
  it('firebase-admin reads what Lite wrote, and Lite reads what firebase-admin wrote', async () => {
    const ref = await addDoc(collection(lite.db, 'email_subscriptions'), {
      email: 'a@example.com',
      subscription_type: 'club',
      source: 'final_cta',
      created_at: serverTimestamp(),
    });
    const seenByAdmin = await admin.db.doc(`email_subscriptions/${ref.id}`).get();
    expect(seenByAdmin.get('email')).toBe('a@example.com');
    expect(seenByAdmin.get('created_at')).toBeInstanceOf(AdminTimestamp);

    await admin.db.doc('public/health').set({ ok: true, at: FieldValue.serverTimestamp() });
    const seenByLite = await getDoc(doc(lite.db, 'public/health'));
    expect(seenByLite.get('ok')).toBe(true);
    expect(seenByLite.get('at')).toBeInstanceOf(Timestamp);
    expect((seenByLite.get('at') as Timestamp).isEqual(Timestamp.fromMillis(0))).toBe(false);
  });

  it('a query over REST sees gRPC writes in the same order firebase-admin does', async () => {
    const batch = admin.db.batch();
    for (const [id, at] of [
      ['b', 2],
      ['a', 2],
      ['c', 1],
    ] as const) {
      batch.set(admin.db.doc(`log/${id}`), { at: AdminTimestamp.fromMillis(at * 1000) });
    }
    await batch.commit();
    const viaLite = await getDocs(query(collection(lite.db, 'log'), orderBy('at')));
    const viaAdmin = await admin.db.collection('log').orderBy('at').get();
    expect(viaLite.docs.map((d) => d.id)).toEqual(['c', 'a', 'b']);
    expect(viaAdmin.docs.map((d) => d.id)).toEqual(['c', 'a', 'b']);
  });

  it('a Lite transaction and a firebase-admin transaction on one counter both apply exactly once', async () => {
    const path = 'counters/shared';
    await admin.db.doc(path).set({ n: 0 });
    let attempts = 0;
    let firstReads = 0;
    const bothRead = deferred();
    const waitForTheOther = async () => {
      if (firstReads < 2) {
        firstReads += 1;
        if (firstReads === 2) bothRead.resolve();
        await bothRead.promise;
      }
    };
    const viaLite = runTransaction(lite.db, async (tx) => {
      attempts += 1;
      const n = (await tx.get(doc(lite.db, path))).get('n') as number;
      await waitForTheOther();
      tx.update(doc(lite.db, path), { n: n + 1 });
    });
    const viaAdmin = admin.db.runTransaction(async (tx) => {
      attempts += 1;
      const n = (await tx.get(admin.db.doc(path))).get('n') as number;
      await waitForTheOther();
      tx.update(admin.db.doc(path), { n: n + 1 });
    });
    await Promise.all([viaLite, viaAdmin]);
    expect((await admin.db.doc(path).get()).get('n')).toBe(2);
    expect(attempts).toBe(3);
  });
});

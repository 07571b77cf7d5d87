// The stand-in judged by firebase-admin (the functions' SDK), over gRPC.
import { AggregateField, FieldPath, FieldValue, Timestamp } from 'firebase-admin/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FirestoreStandIn, startFirestoreStandIn } from './index.ts';
import { type AdminClient, adminClient, deferred } from './test-support.ts';

const PROJECT = 'demo-admin-tests';
let standIn: FirestoreStandIn;
let client: AdminClient;

beforeAll(async () => {
  standIn = await startFirestoreStandIn({ quiet: true, projectId: PROJECT });
  client = adminClient(standIn, PROJECT, 'admin-tests');
});

afterAll(async () => {
  await client.close();
  await standIn.stop();
});

beforeEach(() => standIn.reset());

const GRPC = { NOT_FOUND: 5, ALREADY_EXISTS: 6, FAILED_PRECONDITION: 9, UNIMPLEMENTED: 12 };

describe('documents', () => {
  it('create twice with the same id fails with ALREADY_EXISTS', async () => {
    const ref = client.db.doc('thank_you_mails/abc');
    await ref.create({ sentAt: FieldValue.serverTimestamp() });
    await expect(ref.create({ sentAt: FieldValue.serverTimestamp() })).rejects.toMatchObject({
      code: GRPC.ALREADY_EXISTS,
    });
  });

  it('reads a missing document as missing', async () => {
    const snapshot = await client.db.doc('public/health').get();
    expect(snapshot.exists).toBe(false);
    expect(snapshot.data()).toBeUndefined();
    expect(snapshot.readTime).toBeInstanceOf(Timestamp);
  });

  it('server timestamps come back as Timestamps close to now, equal to the write time', async () => {
    const before = Date.now();
    const result = await client.db.doc('stamps/one').set({ at: FieldValue.serverTimestamp() });
    const after = Date.now();
    const snapshot = await client.db.doc('stamps/one').get();
    const at = snapshot.get('at') as Timestamp;
    expect(at).toBeInstanceOf(Timestamp);
    expect(at.toMillis()).toBeGreaterThanOrEqual(before - 1);
    expect(at.toMillis()).toBeLessThanOrEqual(after + 1);
    expect(at.isEqual(result.writeTime)).toBe(true);
    expect(snapshot.updateTime?.isEqual(result.writeTime)).toBe(true);
    expect(snapshot.createTime?.isEqual(result.writeTime)).toBe(true);
  });

  it('commit times increase strictly, and a write that changes nothing keeps the update time', async () => {
    const ref = client.db.doc('times/one');
    const first = await ref.set({ n: 1 });
    const second = await ref.set({ n: 2 });
    expect(second.writeTime.toMillis() * 1000 + second.writeTime.nanoseconds / 1000).toBeGreaterThan(
      first.writeTime.toMillis() * 1000 + first.writeTime.nanoseconds / 1000,
    );
    const same = await ref.set({ n: 2 });
    expect(same.writeTime.isEqual(second.writeTime)).toBe(true);
    const snapshot = await ref.get();
    expect(snapshot.createTime?.isEqual(first.writeTime)).toBe(true);
    expect(snapshot.updateTime?.isEqual(second.writeTime)).toBe(true);
  });

  it('update applies field masks: dotted paths, delete, and fails on a missing document', async () => {
    const ref = client.db.doc('masks/one');
    await ref.set({ a: 1, b: { c: 2, d: 3 }, e: 5 });
    await ref.update({ 'b.c': 20, e: FieldValue.delete(), 'f.g': 1 });
    expect((await ref.get()).data()).toEqual({ a: 1, b: { c: 20, d: 3 }, f: { g: 1 } });
    await expect(client.db.doc('masks/missing').update({ a: 1 })).rejects.toMatchObject({
      code: GRPC.NOT_FOUND,
    });
  });

  it('set with merge and mergeFields touch only what they name', async () => {
    const ref = client.db.doc('merge/one');
    await ref.set({ a: 1, b: { c: 2, d: 3 } });
    await ref.set({ b: { d: 30 } }, { merge: true });
    await ref.set({ a: 100, z: 'ignored' }, { mergeFields: ['a'] });
    expect((await ref.get()).data()).toEqual({ a: 100, b: { c: 2, d: 30 } });
  });

  it('honours an updateTime precondition', async () => {
    const ref = client.db.doc('preconditions/one');
    const written = await ref.set({ n: 1 });
    await ref.set({ n: 2 });
    await expect(ref.delete({ lastUpdateTime: written.writeTime })).rejects.toMatchObject({
      code: GRPC.FAILED_PRECONDITION,
    });
    expect((await ref.get()).get('n')).toBe(2);
  });

  it('getAll reads several documents, found and missing', async () => {
    await client.db.doc('many/a').set({ keep: 1 });
    const [a, missing] = await client.db.getAll(client.db.doc('many/a'), client.db.doc('many/missing'));
    expect(a?.data()).toEqual({ keep: 1 });
    expect(missing?.exists).toBe(false);
  });
});

describe('batched writes', () => {
  it('are all or nothing: one failing precondition writes nothing', async () => {
    await client.db.doc('batch/existing').set({ n: 0 });
    const batch = client.db.batch();
    batch.set(client.db.doc('batch/a'), { n: 1 });
    batch.update(client.db.doc('batch/existing'), { n: 1 });
    batch.create(client.db.doc('batch/existing'), { n: 2 });
    await expect(batch.commit()).rejects.toMatchObject({ code: GRPC.ALREADY_EXISTS });
    expect((await client.db.doc('batch/a').get()).exists).toBe(false);
    expect((await client.db.doc('batch/existing').get()).get('n')).toBe(0);
  });

  it('take commits above 4 MiB, up to the service limit', async () => {
    const batch = client.db.batch();
    for (let i = 0; i < 6; i++) batch.set(client.db.doc(`large/d${i}`), { text: 'x'.repeat(900_000) });
    await batch.commit();
    expect((await client.db.collection('large').count().get()).data().count).toBe(6);
  });
});

describe('transactions', () => {
  it('two conflicting transactions are both applied exactly once (the loser is aborted and retries)', async () => {
    const counter = client.db.doc('counters/shared');
    await counter.set({ n: 0 });
    let attempts = 0;
    let firstReads = 0;
    const bothRead = deferred();
    const increment = () =>
      client.db.runTransaction(async (tx) => {
        attempts += 1;
        const current = (await tx.get(counter)).get('n') as number;
        if (firstReads < 2) {
          firstReads += 1;
          if (firstReads === 2) bothRead.resolve();
          await bothRead.promise;
        }
        tx.update(counter, { n: current + 1 });
      });
    await Promise.all([increment(), increment()]);
    expect((await counter.get()).get('n')).toBe(2);
    expect(attempts).toBe(3);
  });
});

describe('queries', () => {
  const base = 1_700_000_000;
  // Equal created_at values on purpose: the document id breaks the tie.
  const SECONDS = [5, 1, 3, 3, 2, 5, 4, 3, 1, 2, 6, 6];

  beforeEach(async () => {
    const batch = client.db.batch();
    SECONDS.forEach((s, i) => {
      batch.set(client.db.doc(`email_subscriptions/sub${String(i).padStart(2, '0')}`), {
        email: `person${i}@example.com`,
        subscription_type: i % 2 === 0 ? 'updates' : 'club',
        created_at: Timestamp.fromMillis((base + s) * 1000),
      });
    });
    await batch.commit();
  });

  const expectedOrder = () => {
    return SECONDS.map((s, i) => ({ s, id: `sub${String(i).padStart(2, '0')}` }))
      .sort((a, b) => a.s - b.s || (a.id < b.id ? -1 : 1))
      .map((x) => x.id);
  };

  it('pages by created_at then document id with startAfter a snapshot, exactly once each', async () => {
    const ordered = client.db
      .collection('email_subscriptions')
      .orderBy('created_at')
      .orderBy(FieldPath.documentId());
    const seen: string[] = [];
    let page = await ordered.limit(5).get();
    while (!page.empty) {
      seen.push(...page.docs.map((d) => d.id));
      page = await ordered.startAfter(page.docs.at(-1)).limit(5).get();
    }
    expect(seen).toEqual(expectedOrder());
  });

  it('resumes from a stored cursor of (created_at, id) values', async () => {
    const all = expectedOrder();
    const cursorDoc = await client.db.doc(`email_subscriptions/${all[4]}`).get();
    const rest = await client.db
      .collection('email_subscriptions')
      .orderBy('created_at')
      .orderBy(FieldPath.documentId())
      .startAfter(cursorDoc.get('created_at'), cursorDoc.id)
      .get();
    expect(rest.docs.map((d) => d.id)).toEqual(all.slice(5));
  });

  it('filters by equality and range with the implicit order (inequality field, then id)', async () => {
    const since = Timestamp.fromMillis((base + 3) * 1000);
    const recent = await client.db
      .collection('email_subscriptions')
      .where('subscription_type', '==', 'updates')
      .where('created_at', '>=', since)
      .get();
    const expected = expectedOrder().filter((id) => {
      const i = Number(id.slice(3));
      return i % 2 === 0 && (SECONDS[i] ?? 0) >= 3;
    });
    expect(recent.docs.map((d) => d.id)).toEqual(expected);
  });

  it('counts and offsets', async () => {
    const coll = client.db.collection('email_subscriptions');
    expect((await coll.count().get()).data().count).toBe(12);
    expect((await coll.where('subscription_type', '==', 'club').count().get()).data().count).toBe(6);
    const skipped = await coll.orderBy(FieldPath.documentId()).offset(10).get();
    expect(skipped.docs.map((d) => d.id)).toEqual(['sub10', 'sub11']);
  });

  it('orders mixed types by Firestore value type order', async () => {
    const values: unknown[] = [
      { k: 'map' },
      ['array'],
      new (await import('firebase-admin/firestore')).GeoPoint(1, 1),
      client.db.doc('ref/x'),
      Buffer.from([1]),
      'string',
      Timestamp.fromMillis(0),
      2.5,
      1,
      Number.NaN,
      true,
      null,
    ];
    const batch = client.db.batch();
    values.forEach((v, i) => {
      batch.set(client.db.doc(`mixed/v${String(i).padStart(2, '0')}`), { v });
    });
    await batch.commit();
    const ordered = await client.db.collection('mixed').orderBy('v').get();
    expect(ordered.docs.map((d) => d.id)).toEqual([
      'v11',
      'v10',
      'v09',
      'v08',
      'v07',
      'v06',
      'v05',
      'v04',
      'v03',
      'v02',
      'v01',
      'v00',
    ]);
  });
});

describe('refusals', () => {
  const db = () => client.db;
  const refusals: [string, () => Promise<unknown>, string][] = [
    [
      'increment',
      () =>
        db()
          .doc('t/one')
          .set({ n: FieldValue.increment(1) }),
      'transform increment',
    ],
    [
      'arrayUnion',
      () =>
        db()
          .doc('t/one')
          .set({ a: FieldValue.arrayUnion(1) }),
      'appendMissingElements',
    ],
    ['field masks', () => db().getAll(db().doc('t/one'), { fieldMask: ['a'] }), 'field masks'],
    ['select', () => db().collection('t').select('a').get(), 'select'],
    [
      'BulkWriter',
      async () => {
        const writer = db().bulkWriter();
        writer.onWriteError(() => false);
        const write = writer.create(db().doc('t/b'), {});
        await writer.close().catch(() => {});
        return write;
      },
      'BatchWrite',
    ],
    ['listDocuments', () => db().collection('t').listDocuments(), 'ListDocuments'],
    ['listCollections', () => db().listCollections(), 'ListCollectionIds'],
    [
      'queries in transactions',
      () => db().runTransaction((tx) => tx.get(db().collection('t'))),
      'inside a transaction',
    ],
    ['collection groups', () => db().collectionGroup('t').get(), 'collection group'],
    ['in', () => db().collection('t').where('a', 'in', [1]).get(), 'IN'],
    [
      'sum',
      () =>
        db()
          .collection('t')
          .aggregate({ s: AggregateField.sum('a') })
          .get(),
      'aggregation sum',
    ],
  ];
  it.each(refusals)('refuses %s with UNIMPLEMENTED naming it', async (_name, call, feature) => {
    await expect(call()).rejects.toMatchObject({
      code: GRPC.UNIMPLEMENTED,
      message: expect.stringContaining(feature),
    });
  });

  it('refuses vector search with UNIMPLEMENTED naming the feature', async () => {
    const vectorQuery = client.db
      .collection('docs')
      .findNearest({ vectorField: 'embedding', queryVector: [1, 2], limit: 3, distanceMeasure: 'EUCLIDEAN' });
    await expect(vectorQuery.get()).rejects.toMatchObject({
      code: GRPC.UNIMPLEMENTED,
      message: expect.stringContaining('findNearest'),
    });
  });

  it('refuses query explain with UNIMPLEMENTED', async () => {
    await expect(client.db.collection('docs').explain({ analyze: true })).rejects.toMatchObject({
      code: GRPC.UNIMPLEMENTED,
      message: expect.stringContaining('explain'),
    });
  });

  it('refuses realtime listeners with UNIMPLEMENTED', async () => {
    const error = await new Promise<unknown>((resolve) => {
      const unsubscribe = client.db.doc('live/one').onSnapshot(
        () => undefined,
        (e) => {
          unsubscribe();
          resolve(e);
        },
      );
    });
    // The SDK turns the target's cause into `Error <code>: <message>`.
    expect((error as Error).message).toMatch(/^Error 12: .*realtime listeners/);
  });
});

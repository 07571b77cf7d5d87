// The stand-in judged by firebase/firestore/lite (the web app's SDK), over REST.
import {
  addDoc,
  arrayUnion,
  average,
  Bytes,
  collection,
  collectionGroup,
  deleteDoc,
  deleteField,
  doc,
  documentId,
  endAt,
  endBefore,
  FieldPath,
  GeoPoint,
  getAggregate,
  getCount,
  getDoc,
  getDocs,
  increment,
  limit,
  limitToLast,
  or,
  orderBy,
  query,
  runTransaction,
  serverTimestamp,
  setDoc,
  startAfter,
  startAt,
  sum,
  Timestamp,
  updateDoc,
  where,
  writeBatch,
} from 'firebase/firestore/lite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FirestoreStandIn, startFirestoreStandIn } from './index.ts';
import { deferred, type LiteClient, liteClient } from './test-support.ts';

const PROJECT = 'demo-lite-tests';
let standIn: FirestoreStandIn;
let client: LiteClient;
let other: LiteClient;

beforeAll(async () => {
  standIn = await startFirestoreStandIn({ quiet: true, projectId: PROJECT });
  client = liteClient(standIn, PROJECT, 'lite-tests');
  other = liteClient(standIn, 'demo-other-project', 'lite-tests-other');
});

afterAll(async () => {
  await Promise.all([client.close(), other.close()]);
  await standIn.stop();
});

beforeEach(() => standIn.reset());

const ids = (snapshot: { docs: { id: string }[] }) => snapshot.docs.map((d) => d.id);

describe('documents', () => {
  it('reads a missing document as missing', async () => {
    const snapshot = await getDoc(doc(client.db, 'public/health'));
    expect(snapshot.exists()).toBe(false);
    expect(snapshot.data()).toBeUndefined();
  });

  it('stores every value type and reads it back exactly', async () => {
    const data = {
      nothing: null,
      yes: true,
      int: 9007199254740991,
      double: 1.5,
      negativeZero: -0,
      when: new Timestamp(1700000000, 123456000),
      text: 'héllo 😀',
      bytes: Bytes.fromUint8Array(new Uint8Array([0, 1, 254, 255])),
      ref: doc(client.db, 'a/b/c/d'),
      place: new GeoPoint(52.5, 13.4),
      list: [1, 'two', { three: 3 }],
      nested: { deeper: { deepest: 'x' }, empty: {} },
      emptyList: [],
    };
    await setDoc(doc(client.db, 'types/all'), data);
    const snapshot = await getDoc(doc(client.db, 'types/all'));
    expect(snapshot.exists()).toBe(true);
    const read = snapshot.data() ?? {};
    expect(read.nothing).toBeNull();
    expect(read.yes).toBe(true);
    expect(read.int).toBe(9007199254740991);
    expect(read.double).toBe(1.5);
    expect(Object.is(read.negativeZero, -0)).toBe(true);
    expect((read.when as Timestamp).isEqual(data.when)).toBe(true);
    expect(read.text).toBe('héllo 😀');
    expect((read.bytes as Bytes).toUint8Array()).toEqual(new Uint8Array([0, 1, 254, 255]));
    expect(read.ref.path).toBe('a/b/c/d');
    expect((read.place as GeoPoint).isEqual(data.place)).toBe(true);
    expect(read.list).toEqual([1, 'two', { three: 3 }]);
    expect(read.nested).toEqual({ deeper: { deepest: 'x' }, empty: {} });
    expect(read.emptyList).toEqual([]);
  });

  it('addDoc gives a 20-character automatic id and a server timestamp close to now', async () => {
    const before = Date.now();
    const ref = await addDoc(collection(client.db, 'email_subscriptions'), {
      email: 'a@example.com',
      subscription_type: 'updates',
      source: 'hero_form',
      created_at: serverTimestamp(),
    });
    const after = Date.now();
    expect(ref.id).toMatch(/^[A-Za-z0-9]{20}$/);
    const created = (await getDoc(ref)).get('created_at') as Timestamp;
    expect(created).toBeInstanceOf(Timestamp);
    expect(created.toMillis()).toBeGreaterThanOrEqual(before - 1);
    expect(created.toMillis()).toBeLessThanOrEqual(after + 1);
  });

  it('updateDoc changes only the masked fields, nested paths included', async () => {
    const ref = doc(client.db, 'masks/one');
    await setDoc(ref, { a: 1, b: { c: 2, d: 3 }, e: 5 });
    await updateDoc(ref, {
      'b.c': 20,
      e: deleteField(),
      'f.g': 1,
    });
    expect((await getDoc(ref)).data()).toEqual({ a: 1, b: { c: 20, d: 3 }, f: { g: 1 } });
  });

  it('updateDoc on a missing document fails with not-found and writes nothing', async () => {
    const ref = doc(client.db, 'masks/missing');
    await expect(updateDoc(ref, { a: 1 })).rejects.toMatchObject({ code: 'not-found' });
    expect((await getDoc(ref)).exists()).toBe(false);
  });

  it('setDoc with merge keeps the fields it does not name', async () => {
    const ref = doc(client.db, 'merge/one');
    await setDoc(ref, { a: 1, b: { c: 2, d: 3 } });
    await setDoc(ref, { b: { d: 30 }, e: 'new' }, { merge: true });
    expect((await getDoc(ref)).data()).toEqual({ a: 1, b: { c: 2, d: 30 }, e: 'new' });
  });

  it('refuses a document larger than 1 MiB, as Firestore does', async () => {
    const ref = doc(client.db, 'sizes/big');
    await expect(setDoc(ref, { text: 'x'.repeat(1_048_576) })).rejects.toMatchObject({
      message: expect.stringContaining('exceeds the maximum allowed size'),
    });
    await setDoc(ref, { text: 'x'.repeat(1_000_000) });
    expect(((await getDoc(ref)).get('text') as string).length).toBe(1_000_000);
  });

  it('deleteDoc removes the document', async () => {
    const ref = doc(client.db, 'gone/one');
    await setDoc(ref, { a: 1 });
    await deleteDoc(ref);
    expect((await getDoc(ref)).exists()).toBe(false);
  });
});

describe('batched writes', () => {
  it('are all or nothing: one failing precondition writes nothing', async () => {
    const batch = writeBatch(client.db);
    batch.set(doc(client.db, 'batch/a'), { n: 1 });
    batch.set(doc(client.db, 'batch/b'), { n: 2 });
    batch.update(doc(client.db, 'batch/missing'), { n: 3 });
    await expect(batch.commit()).rejects.toMatchObject({ code: 'not-found' });
    expect((await getDoc(doc(client.db, 'batch/a'))).exists()).toBe(false);
    expect((await getDoc(doc(client.db, 'batch/b'))).exists()).toBe(false);
  });

  it('apply every write when all preconditions hold', async () => {
    await setDoc(doc(client.db, 'batch/existing'), { n: 0 });
    const batch = writeBatch(client.db);
    batch.set(doc(client.db, 'batch/a'), { n: 1 });
    batch.update(doc(client.db, 'batch/existing'), { n: 3 });
    batch.delete(doc(client.db, 'batch/a'));
    await batch.commit();
    expect((await getDoc(doc(client.db, 'batch/a'))).exists()).toBe(false);
    expect((await getDoc(doc(client.db, 'batch/existing'))).get('n')).toBe(3);
  });
});

describe('transactions', () => {
  it('two conflicting transactions are both applied exactly once (the loser retries)', async () => {
    const counter = doc(client.db, 'counters/shared');
    await setDoc(counter, { n: 0 });
    let attempts = 0;
    let firstReads = 0;
    const bothRead = deferred();
    const increment = () =>
      runTransaction(client.db, async (tx) => {
        attempts += 1;
        const current = (await tx.get(counter)).get('n') as number;
        // The first attempt of each waits until both have read the same version.
        if (firstReads < 2) {
          firstReads += 1;
          if (firstReads === 2) bothRead.resolve();
          await bothRead.promise;
        }
        tx.update(counter, { n: current + 1 });
      });
    await Promise.all([increment(), increment()]);
    expect((await getDoc(counter)).get('n')).toBe(2);
    expect(attempts).toBe(3);
  });

  it('a transaction that reads a missing document and creates it conflicts with a concurrent create', async () => {
    const ref = doc(client.db, 'claims/one');
    const read = deferred();
    const proceed = deferred();
    let attempts = 0;
    const claim = runTransaction(client.db, async (tx) => {
      attempts += 1;
      const snapshot = await tx.get(ref);
      if (attempts === 1) {
        read.resolve();
        await proceed.promise;
      }
      if (snapshot.exists()) return 'already claimed';
      tx.set(ref, { by: 'transaction' });
      return 'claimed';
    });
    await read.promise;
    await setDoc(ref, { by: 'someone else' });
    proceed.resolve();
    expect(await claim).toBe('already claimed');
    expect((await getDoc(ref)).get('by')).toBe('someone else');
  });
});

describe('queries', () => {
  beforeEach(async () => {
    const batch = writeBatch(client.db);
    const rows = [
      { id: 'a', n: 1, kind: 'x', tags: ['red'], at: new Timestamp(100, 0) },
      { id: 'b', n: 2, kind: 'y', tags: ['blue'], at: new Timestamp(200, 0) },
      { id: 'c', n: 3, kind: 'x', tags: ['red', 'blue'], at: new Timestamp(200, 0) },
      { id: 'd', n: 4, kind: 'z', tags: [], at: new Timestamp(300, 0) },
      { id: 'e', n: 5, kind: 'y', tags: ['green'], at: new Timestamp(200, 0) },
    ];
    for (const { id, ...data } of rows) batch.set(doc(client.db, 'items', id), data);
    batch.set(doc(client.db, 'items/noN'), { kind: 'x' });
    batch.set(doc(client.db, 'other/a/items/deep'), { n: 10, kind: 'x' });
    await batch.commit();
  });

  const items = () => collection(client.db, 'items');

  it('filters with equality and ranges, ordered and limited', async () => {
    expect(ids(await getDocs(query(items(), where('kind', '==', 'x'))))).toEqual(['a', 'c', 'noN']);
    expect(ids(await getDocs(query(items(), where('n', '>', 1), where('n', '<=', 4))))).toEqual([
      'b',
      'c',
      'd',
    ]);
    expect(ids(await getDocs(query(items(), orderBy('n', 'desc'), limit(2))))).toEqual(['e', 'd']);
  });

  it('pages by (at, document id) with startAfter a document, as the sync does', async () => {
    const ordered = query(items(), orderBy('at'), orderBy(documentId()));
    const seen: string[] = [];
    let page = await getDocs(query(ordered, limit(2)));
    while (page.docs.length > 0) {
      seen.push(...ids(page));
      page = await getDocs(query(ordered, startAfter(page.docs.at(-1)), limit(2)));
    }
    expect(seen).toEqual(['a', 'b', 'c', 'e', 'd']);
  });

  it('honours startAt, endAt, endBefore and limitToLast', async () => {
    const byN = query(items(), orderBy('n'));
    expect(ids(await getDocs(query(byN, startAt(2), endAt(4))))).toEqual(['b', 'c', 'd']);
    expect(ids(await getDocs(query(byN, startAfter(2), endBefore(4))))).toEqual(['c']);
    expect(ids(await getDocs(query(byN, limitToLast(2))))).toEqual(['d', 'e']);
    const byAt = query(items(), orderBy('at', 'desc'), orderBy(documentId(), 'desc'));
    expect(ids(await getDocs(query(byAt, startAt(new Timestamp(200, 0), 'c'))))).toEqual(['c', 'b', 'a']);
  });

  it('counts on the server', async () => {
    expect((await getCount(query(items(), where('kind', '==', 'x')))).data().count).toBe(3);
  });
});

describe('refusals', () => {
  const items = () => collection(client.db, 'items');
  const refusals: [string, () => Promise<unknown>, string][] = [
    ['increment', () => setDoc(doc(client.db, 't/one'), { n: increment(1) }), 'field transform increment'],
    ['arrayUnion', () => setDoc(doc(client.db, 't/one'), { a: arrayUnion(1) }), 'appendMissingElements'],
    ['quoted field paths', () => updateDoc(doc(client.db, 't/one'), new FieldPath('x.y'), 1), 'quoted'],
    ['!=', () => getDocs(query(items(), where('n', '!=', 3))), 'NOT_EQUAL'],
    ['in', () => getDocs(query(items(), where('kind', 'in', ['y']))), 'the IN field filter'],
    ['array-contains', () => getDocs(query(items(), where('t', 'array-contains', 1))), 'ARRAY_CONTAINS'],
    ['or()', () => getDocs(query(items(), or(where('n', '==', 1), where('n', '==', 2)))), 'OR filters'],
    ['== null', () => getDocs(query(items(), where('n', '==', null))), 'unaryFilter'],
    ['collection groups', () => getDocs(collectionGroup(client.db, 'items')), 'collection group'],
    ['sum', () => getAggregate(items(), { total: sum('n') }), 'aggregation sum'],
    ['average', () => getAggregate(items(), { mean: average('n') }), 'aggregation avg'],
    ['other projects', () => getDoc(doc(other.db, 'public/health')), 'several projects'],
  ];
  it.each(refusals)('refuses %s with UNIMPLEMENTED naming it', async (_name, call, feature) => {
    await expect(call()).rejects.toMatchObject({
      code: 'unimplemented',
      message: expect.stringContaining(feature),
    });
  });
});

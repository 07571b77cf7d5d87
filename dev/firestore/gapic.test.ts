// The gRPC methods firebase-admin's high-level API does not reach, judged by the official generated
// client that ships inside @google-cloud/firestore (v1.FirestoreClient).
import { createRequire } from 'node:module';
import firestorePackage from '@google-cloud/firestore';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FirestoreStandIn, startFirestoreStandIn } from './index.ts';

const PROJECT = 'demo-gapic-tests';
const ROOT = `projects/${PROJECT}/databases/(default)/documents`;
const require = createRequire(import.meta.url);
// The client must get credentials from the same grpc-js copy google-gax uses inside the package.
const { grpc } = createRequire(require.resolve('@google-cloud/firestore'))('google-gax') as {
  grpc: { credentials: { createInsecure(): never } };
};

let standIn: FirestoreStandIn;
let client: InstanceType<typeof firestorePackage.v1.FirestoreClient>;

beforeAll(async () => {
  standIn = await startFirestoreStandIn({ quiet: true });
  client = new firestorePackage.v1.FirestoreClient({
    servicePath: standIn.host,
    port: standIn.port,
    sslCreds: grpc.credentials.createInsecure(),
    projectId: PROJECT,
  });
});

afterAll(async () => {
  await client.close();
  await standIn.stop();
});

beforeEach(() => standIn.reset());

describe('document methods', () => {
  it('CreateDocument picks a 20-character id; Get, Update with a mask and Delete follow', async () => {
    const [created] = await client.createDocument({
      parent: ROOT,
      collectionId: 'notes',
      document: { fields: { a: { integerValue: 1 }, b: { stringValue: 'x' } } },
    });
    expect(created.name?.startsWith(`${ROOT}/notes/`)).toBe(true);
    expect(created.name?.split('/').at(-1)).toMatch(/^[A-Za-z0-9]{20}$/);
    await client.updateDocument({
      document: { name: created.name, fields: { a: { integerValue: 2 } } },
      updateMask: { fieldPaths: ['a'] },
      currentDocument: { exists: true },
    });
    const [got] = await client.getDocument({ name: created.name });
    expect(got.fields?.a?.integerValue).toBe('2');
    expect(got.fields?.b?.stringValue).toBe('x');
    await client.deleteDocument({ name: created.name });
    await expect(client.getDocument({ name: created.name })).rejects.toMatchObject({ code: 5 });
  });

  it('CreateDocument with an existing id fails with ALREADY_EXISTS', async () => {
    const request = { parent: ROOT, collectionId: 'notes', documentId: 'fixed', document: { fields: {} } };
    await client.createDocument(request);
    await expect(client.createDocument(request)).rejects.toMatchObject({ code: 6 });
  });

  it('ListDocuments pages by name', async () => {
    for (const id of ['c', 'a', 'b']) {
      await client.createDocument({ parent: ROOT, collectionId: 'pages', documentId: id, document: {} });
    }
    const [first, , response] = await client.listDocuments(
      { parent: ROOT, collectionId: 'pages', pageSize: 2 },
      { autoPaginate: false },
    );
    expect(first.map((d) => d.name?.split('/').at(-1))).toEqual(['a', 'b']);
    const [second] = await client.listDocuments(
      { parent: ROOT, collectionId: 'pages', pageSize: 2, pageToken: response?.nextPageToken ?? '' },
      { autoPaginate: false },
    );
    expect(second.map((d) => d.name?.split('/').at(-1))).toEqual(['c']);
  });
});

describe('transactions', () => {
  it('BeginTransaction, reads in it, Commit; the id cannot be used again', async () => {
    const [{ transaction }] = await client.beginTransaction({
      database: `projects/${PROJECT}/databases/(default)`,
    });
    expect(transaction?.length).toBeGreaterThan(0);
    await client.commit({
      database: `projects/${PROJECT}/databases/(default)`,
      writes: [{ update: { name: `${ROOT}/t/one`, fields: {} } }],
      transaction,
    });
    await expect(
      client.commit({ database: `projects/${PROJECT}/databases/(default)`, writes: [], transaction }),
    ).rejects.toMatchObject({ code: 3, details: expect.stringMatching(/transaction has expired/) });
  });

  it('Rollback ends a transaction', async () => {
    const database = `projects/${PROJECT}/databases/(default)`;
    const [{ transaction }] = await client.beginTransaction({ database });
    await client.rollback({ database, transaction });
    await expect(client.commit({ database, writes: [], transaction })).rejects.toMatchObject({ code: 3 });
  });

  it('refuses writes in a read-only transaction', async () => {
    const database = `projects/${PROJECT}/databases/(default)`;
    const [{ transaction }] = await client.beginTransaction({ database, options: { readOnly: {} } });
    await expect(
      client.commit({ database, writes: [{ update: { name: `${ROOT}/t/one`, fields: {} } }], transaction }),
    ).rejects.toMatchObject({ code: 3 });
  });
});

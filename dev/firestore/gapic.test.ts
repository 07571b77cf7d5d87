// The gRPC service as the official generated client inside @google-cloud/firestore (v1.FirestoreClient)
// calls it: transactions by hand, and the refusal of the methods the product does not call.
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
  standIn = await startFirestoreStandIn({ quiet: true, projectId: PROJECT });
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

describe('methods the product does not call', () => {
  it('are refused with UNIMPLEMENTED naming the method', async () => {
    await expect(client.getDocument({ name: `${ROOT}/t/one` })).rejects.toMatchObject({
      code: 12,
      details: expect.stringContaining('GetDocument'),
    });
    await expect(
      client.createDocument({ parent: ROOT, collectionId: 't', document: {} }),
    ).rejects.toMatchObject({
      code: 12,
      details: expect.stringContaining('CreateDocument'),
    });
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

  it('refuses read-only transactions with UNIMPLEMENTED', async () => {
    const database = `projects/${PROJECT}/databases/(default)`;
    await expect(client.beginTransaction({ database, options: { readOnly: {} } })).rejects.toMatchObject({
      code: 12,
      details: expect.stringContaining('read-only transactions'),
    });
  });
});

// The stand-in's HTTP surface beyond the SDKs: the emulator reset call, the control surface (state, reset,
// faults as the real clients experience them), CORS for the browser, and REST errors in Google's shape.
import { addDoc, collection, doc, getDoc, setDoc } from 'firebase/firestore/lite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DocumentDump, type FirestoreStandIn, startFirestoreStandIn } from './index.ts';
import { type AdminClient, adminClient, type LiteClient, liteClient } from './test-support.ts';

const PROJECT = 'demo-control-tests';
const OTHER_PROJECT = 'demo-control-other';
let standIn: FirestoreStandIn;
let lite: LiteClient;
let admin: AdminClient;
let base: string;

beforeAll(async () => {
  standIn = await startFirestoreStandIn({ quiet: true, projectId: PROJECT });
  base = `http://${standIn.hostPort}`;
  lite = liteClient(standIn, PROJECT, 'control-lite');
  admin = adminClient(standIn, PROJECT, 'control-admin');
});

afterAll(async () => {
  await Promise.all([lite.close(), admin.close()]);
  await standIn.stop();
});

beforeEach(async () => {
  standIn.reset();
  await fetch(`${base}/__control/faults`, { method: 'DELETE' });
});

const putFaults = async (body: unknown) => {
  const response = await fetch(`${base}/__control/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return response.json();
};

/** Resolves once the stand-in holds `count` requests unanswered (polling its own state, no timing). */
async function untilHeld(count: number): Promise<void> {
  while (standIn.heldRequests < count) await new Promise((resolve) => setImmediate(resolve));
}

interface GoogleError {
  error: { code: number; status: string; message: string };
}
const errorOf = async (response: Response) => ((await response.json()) as GoogleError).error;

const signup = { email: 'a@example.com', subscription_type: 'updates', source: 'hero_form' };

describe('reset', () => {
  const emulatorReset = (project: string) =>
    fetch(`${base}/emulator/v1/projects/${project}/databases/(default)/documents`, { method: 'DELETE' });

  it("DELETE /emulator/v1/.../documents (the emulator's reset) clears its project; another holds nothing", async () => {
    await setDoc(doc(lite.db, 'a/one'), { n: 1 });
    expect((await emulatorReset(OTHER_PROJECT)).status).toBe(200);
    expect((await getDoc(doc(lite.db, 'a/one'))).get('n')).toBe(1);
    expect((await emulatorReset(PROJECT)).status).toBe(200);
    expect((await getDoc(doc(lite.db, 'a/one'))).exists()).toBe(false);
  });

  it('POST /__control/reset clears the data and the faults', async () => {
    await setDoc(doc(lite.db, 'a/one'), { n: 1 });
    standIn.faults.setUnavailable('drop');
    expect((await fetch(`${base}/__control/reset`, { method: 'POST' })).status).toBe(204);
    expect(standIn.faults.unavailable).toBe(false);
    expect((await getDoc(doc(lite.db, 'a/one'))).exists()).toBe(false);
  });
});

describe('refused writes', () => {
  it("make Lite's addDoc fail with the given code and message, N times, then succeed", async () => {
    await putFaults({
      rejectWrites: {
        collection: 'email_subscriptions',
        count: 2,
        code: 'PERMISSION_DENIED',
        message: 'Missing or insufficient permissions.',
      },
    });
    const subscriptions = collection(lite.db, 'email_subscriptions');
    for (let i = 0; i < 2; i++) {
      await expect(addDoc(subscriptions, signup)).rejects.toMatchObject({
        code: 'permission-denied',
        message: expect.stringContaining('Missing or insufficient permissions.'),
      });
    }
    expect(standIn.documents('email_subscriptions')).toEqual([]);
    await addDoc(subscriptions, signup);
    expect(standIn.documents('email_subscriptions')).toHaveLength(1);
  });

  it('only refuse writes to the named collection', async () => {
    standIn.faults.rejectWrites({ collection: 'email_subscriptions', count: 1, code: 'PERMISSION_DENIED' });
    await setDoc(doc(lite.db, 'other/one'), { n: 1 });
    await expect(addDoc(collection(lite.db, 'email_subscriptions'), signup)).rejects.toMatchObject({
      code: 'permission-denied',
    });
  });

  it('reach firebase-admin as the gRPC status, any code', async () => {
    standIn.faults.rejectWrites({
      collection: 'thank_you_mails',
      count: 1,
      code: 'FAILED_PRECONDITION',
      message: 'refused for the test',
    });
    await expect(admin.db.doc('thank_you_mails/h').create({ at: 1 })).rejects.toMatchObject({
      code: 9,
      details: 'refused for the test',
    });
    expect((await admin.db.doc('thank_you_mails/h').get()).exists).toBe(false);
  });

  it('are validated before anything changes', async () => {
    const response = await fetch(`${base}/__control/faults`, {
      method: 'PUT',
      body: JSON.stringify({ rejectWrites: { collection: 'x', code: 'NOT_A_CODE' }, unavailable: true }),
    });
    expect(response.status).toBe(400);
    expect(await (await fetch(`${base}/__control/faults`)).json()).toEqual({
      rejectWrites: [],
      unavailable: false,
      heldRequests: 0,
    });
  });
});

describe('unavailable', () => {
  it('holds Lite reads unanswered until lifted, then drops them; later reads work', async () => {
    await putFaults({ unavailable: true });
    let settled = false;
    const pending = getDoc(doc(lite.db, 'public/health')).finally(() => {
      settled = true;
    });
    pending.catch(() => undefined);
    await untilHeld(1);
    // The client-side timeout the web app uses: nothing has come back.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toBe(false);
    await fetch(`${base}/__control/faults`, { method: 'DELETE' });
    await expect(pending).rejects.toBeDefined();
    expect((await getDoc(doc(lite.db, 'public/health'))).exists()).toBe(false);
  });

  it("in 'drop' mode fails Lite's requests at once", async () => {
    standIn.faults.setUnavailable('drop');
    await expect(getDoc(doc(lite.db, 'public/health'))).rejects.toBeDefined();
    await expect(addDoc(collection(lite.db, 'email_subscriptions'), signup)).rejects.toBeDefined();
    standIn.faults.setUnavailable(false);
    expect(standIn.documents()).toEqual([]);
  });

  it('holds firebase-admin calls; the SDK retries once the service is back', async () => {
    await admin.db.doc('public/health').set({ ok: true });
    standIn.faults.setUnavailable(true);
    const pending = admin.db.doc('public/health').get();
    await untilHeld(1);
    standIn.faults.setUnavailable(false);
    expect((await pending).get('ok')).toBe(true);
  });

  it('still answers the control endpoints', async () => {
    standIn.faults.setUnavailable(true);
    const response = await fetch(`${base}/__control/state`);
    expect(response.status).toBe(200);
    standIn.faults.setUnavailable(false);
  });
});

describe('state', () => {
  it('lists a collection with plain data and exact fields', async () => {
    await setDoc(doc(lite.db, 'email_subscriptions/x1'), { ...signup, n: 5 });
    await setDoc(doc(lite.db, 'elsewhere/x2'), { n: 1 });
    const response = await fetch(`${base}/__control/state?collection=email_subscriptions`);
    const body = (await response.json()) as { documents: DocumentDump[] };
    expect(body.documents).toHaveLength(1);
    expect(body.documents[0]).toMatchObject({
      name: `projects/${PROJECT}/databases/(default)/documents/email_subscriptions/x1`,
      path: 'email_subscriptions/x1',
      id: 'x1',
      data: { ...signup, n: 5 },
      fields: { n: { integerValue: '5' }, email: { stringValue: 'a@example.com' } },
    });
    expect(body.documents[0]?.createTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });
});

describe('REST surface', () => {
  const rest = (method: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/v1/projects/${PROJECT}/databases/(default)/documents:${method}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...headers },
      body: JSON.stringify(body),
    });
  const name = (path: string) => `projects/${PROJECT}/databases/(default)/documents/${path}`;

  it('answers a CORS preflight with the headers the SDK sends', async () => {
    const response = await fetch(`${base}/v1/projects/${PROJECT}/databases/(default)/documents:commit`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://127.0.0.1:5000',
        'access-control-request-method': 'POST',
        'access-control-request-headers':
          'content-type,x-goog-api-client,x-firebase-gmpid,x-goog-request-params',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:5000');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    const allowed = response.headers.get('access-control-allow-headers') ?? '';
    for (const header of ['content-type', 'x-goog-api-client', 'x-firebase-gmpid', 'x-goog-request-params']) {
      expect(allowed).toContain(header);
    }
  });

  it('puts CORS headers on answers and errors', async () => {
    const ok = await rest('batchGet', { documents: [name('a/b')] }, { origin: 'http://localhost:5000' });
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:5000');
    const refused = await rest('commit', { writes: [{}] }, { origin: 'http://localhost:5000' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('access-control-allow-origin')).toBe('http://localhost:5000');
  });

  it('answers errors in the Google error JSON shape with the matching HTTP status', async () => {
    const write = { update: { name: name('dupes/one'), fields: {} }, currentDocument: { exists: false } };
    expect((await rest('commit', { writes: [write] })).status).toBe(200);
    const again = await rest('commit', { writes: [write] });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({
      error: {
        code: 409,
        status: 'ALREADY_EXISTS',
        message: `Document already exists: ${name('dupes/one')}`,
      },
    });
  });

  it('refuses fields it does not know instead of ignoring them', async () => {
    const response = await rest('batchGet', { documents: [name('a/b')], notAField: true });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).status).toBe('INVALID_ARGUMENT');
  });

  it('refuses an unsupported query with 501 UNIMPLEMENTED naming the feature', async () => {
    const response = await fetch(`${base}/v1/projects/${PROJECT}/databases/(default)/documents:runQuery`, {
      method: 'POST',
      body: JSON.stringify({
        structuredQuery: {
          from: [{ collectionId: 'docs' }],
          findNearest: {
            vectorField: { fieldPath: 'embedding' },
            queryVector: { arrayValue: { values: [{ doubleValue: 1 }] } },
            distanceMeasure: 'EUCLIDEAN',
            limit: 3,
          },
        },
      }),
    });
    expect(response.status).toBe(501);
    const error = await errorOf(response);
    expect(error.status).toBe('UNIMPLEMENTED');
    expect(error.message).toContain('findNearest');
  });

  it('refuses REST methods it does not serve with 501', async () => {
    const response = await fetch(`${base}/v1/${name('a/b')}`, { method: 'PUT', body: '{}' });
    expect(response.status).toBe(501);
    expect((await fetch(`${base}/v1/${name('a/b')}`)).status).toBe(501);
    const partition = await rest('partitionQuery', {});
    expect(partition.status).toBe(501);
    expect((await errorOf(partition)).message).toContain('partitionQuery');
  });

  it('refuses to load security rules, saying it does not evaluate them', async () => {
    const response = await fetch(`${base}/emulator/v1/projects/${PROJECT}:securityRules`, {
      method: 'PUT',
      body: '{}',
    });
    expect(response.status).toBe(501);
    expect((await errorOf(response)).message).toContain('does not evaluate');
  });

  it('answers GET / like the emulator', async () => {
    const response = await fetch(`${base}/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('Ok\n');
  });
});

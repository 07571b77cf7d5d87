// dataDir (--data): data survives a restart exactly, through the API and through the CLI.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Bytes, doc, GeoPoint, getDoc, setDoc, Timestamp } from 'firebase/firestore/lite';
import { afterEach, describe, expect, it } from 'vitest';
import { type DocumentDump, startFirestoreStandIn } from './index.ts';
import { liteClient } from './test-support.ts';

const PROJECT = 'demo-persistence-tests';
const here = path.dirname(fileURLToPath(import.meta.url));
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'firestore-stand-in-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const everyType = () => ({
  nothing: null,
  flag: false,
  big: 9007199254740991,
  ratio: 0.1,
  when: new Timestamp(1700000000, 123456000),
  text: 'ünïcode 😀',
  bytes: Bytes.fromUint8Array(new Uint8Array([0, 255, 7])),
  place: new GeoPoint(-33.9, 151.2),
  list: [1, 'a', { b: [true] }],
  nested: { map: { deep: 'yes' } },
});

describe('export and import', () => {
  it('round-trips every value type and keeps create and update times', async () => {
    const dir = await tempDir();
    const first = await startFirestoreStandIn({ quiet: true, projectId: PROJECT, dataDir: dir });
    const writer = liteClient(first, PROJECT, 'persistence-writer');
    await setDoc(doc(writer.db, 'things/all'), everyType());
    await setDoc(doc(writer.db, 'things/all/sub/child'), { n: 1 });
    await setDoc(doc(writer.db, 'things/all/sub/child'), { n: 2 });
    const [before] = first.documents('sub');
    await writer.close();
    await first.stop();
    expect(existsSync(path.join(dir, 'firestore-stand-in.json'))).toBe(true);

    const second = await startFirestoreStandIn({ quiet: true, projectId: PROJECT, dataDir: dir });
    cleanups.push(() => second.stop());
    const reader = liteClient(second, PROJECT, 'persistence-reader');
    cleanups.push(() => reader.close());
    const all = await getDoc(doc(reader.db, 'things/all'));
    const data = all.data() ?? {};
    const expected = everyType();
    expect(data.nothing).toBeNull();
    expect(data.flag).toBe(false);
    expect(data.big).toBe(9007199254740991);
    expect(data.ratio).toBe(0.1);
    expect((data.when as Timestamp).isEqual(expected.when)).toBe(true);
    expect(data.text).toBe(expected.text);
    expect((data.bytes as Bytes).isEqual(expected.bytes)).toBe(true);
    expect((data.place as GeoPoint).isEqual(expected.place)).toBe(true);
    expect(data.list).toEqual(expected.list);
    expect(data.nested).toEqual(expected.nested);

    const [after] = second.documents('sub');
    expect(after).toEqual(before);
    expect(after?.createTime).not.toBe(after?.updateTime);

    // New commits come after every imported time.
    await setDoc(doc(reader.db, 'things/later'), { n: 1 });
    const [later] = second.documents('things').filter((d) => d.id === 'later');
    expect(later?.updateTime && before?.updateTime && later.updateTime > before.updateTime).toBe(true);
  });

  it('starts empty from a directory without an export, creating it when missing', async () => {
    const dir = path.join(await tempDir(), 'missing');
    const standIn = await startFirestoreStandIn({ quiet: true, dataDir: dir });
    cleanups.push(() => standIn.stop());
    expect(standIn.documents()).toEqual([]);
    expect(existsSync(dir)).toBe(true);
  });

  it("refuses another project's export instead of serving it as this one's", async () => {
    const dir = await tempDir();
    await (await startFirestoreStandIn({ quiet: true, projectId: 'demo-one', dataDir: dir })).stop();
    await expect(startFirestoreStandIn({ quiet: true, projectId: 'demo-two', dataDir: dir })).rejects.toThrow(
      /holds projects\/demo-one/,
    );
  });
});

/** Starts the CLI and resolves with the port it printed. */
function startCli(args: string[]): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(here, 'cli.ts'), '--port', '0', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (m) resolve({ child, port: Number(m[1]), output: () => output });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`CLI exited (${code}) before listening:\n${output}`)));
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('CLI', () => {
  it('says it does not evaluate rules, writes its data on SIGINT, loads it on the next start, stops on SIGTERM', async () => {
    const dir = await tempDir();
    const first = await startCli(['--project', PROJECT, '--data', dir]);
    cleanups.push(async () => first.child.kill('SIGKILL'));
    expect(first.output()).toContain('does NOT evaluate Firestore security rules');
    const write = await fetch(
      `http://127.0.0.1:${first.port}/v1/projects/${PROJECT}/databases/(default)/documents:commit`,
      {
        method: 'POST',
        body: JSON.stringify({
          writes: [
            {
              update: {
                name: `projects/${PROJECT}/databases/(default)/documents/kept/one`,
                fields: { n: { integerValue: '7' } },
              },
            },
          ],
        }),
      },
    );
    expect(write.status).toBe(200);
    const firstExit = exitOf(first.child);
    first.child.kill('SIGINT');
    expect(await firstExit).toBe(0);
    const written = JSON.parse(await readFile(path.join(dir, 'firestore-stand-in.json'), 'utf8'));
    expect(written.database).toBe(`projects/${PROJECT}/databases/(default)`);
    expect(written.documents).toHaveLength(1);

    const second = await startCli(['--project', PROJECT, '--data', dir]);
    cleanups.push(async () => second.child.kill('SIGKILL'));
    const response = await fetch(`http://127.0.0.1:${second.port}/__control/state?collection=kept`);
    const dump = (await response.json()) as { documents: DocumentDump[] };
    expect(dump.documents.map((d) => d.data)).toEqual([{ n: 7 }]);
    const secondExit = exitOf(second.child);
    second.child.kill('SIGTERM');
    expect(await secondExit).toBe(0);
  });

  it('names the port when it is already in use', async () => {
    const running = await startFirestoreStandIn({ quiet: true });
    cleanups.push(() => running.stop());
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(here, 'cli.ts'), '--port', String(running.port), '--quiet'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    expect(await exitOf(child)).toBe(1);
    expect(stderr).toContain(`port ${running.port}`);
    expect(stderr).toContain('already in use');
  });
});

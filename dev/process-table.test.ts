import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isStillRunning, killProcesses, processesMarked } from './process-table.ts';

describe('finding what a run left behind by the mark in its environment', () => {
  it('finds an orphan in a group of its own, whose parent is gone, and kills it with its group', async () => {
    const mark = randomUUID();
    // A parent that starts a grandchild in a group of its own (as firebase-tools starts java) and exits at once:
    // the grandchild is re-parented, out of every tree and group the test knows.
    const parent = spawn(
      process.execPath,
      [
        '-e',
        `const { spawn } = require('node:child_process');
         const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
         console.log(c.pid); c.unref();`,
      ],
      { env: { ...process.env, GOODY_TEST_MARK: mark }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    parent.stdout.on('data', (chunk) => {
      out += chunk;
    });
    await new Promise((resolve) => parent.once('exit', resolve));
    const orphan = Number(out.trim());
    expect(orphan).toBeGreaterThan(1);

    const found = processesMarked('GOODY_TEST_MARK', mark);
    expect(found.map((entry) => entry.pid)).toEqual([orphan]);
    expect(processesMarked('GOODY_TEST_MARK', randomUUID())).toEqual([]);

    killProcesses(found);
    for (let i = 0; i < 50 && found.some(isStillRunning); i++) await delay(20);
    expect(found.filter(isStillRunning)).toEqual([]);
    expect(processesMarked('GOODY_TEST_MARK', mark)).toEqual([]);
  });
});

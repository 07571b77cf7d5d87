import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalScheduler, nextRun, parseSchedule, parseScheduleOverrides } from './scheduler.ts';

describe("the local scheduler's schedules (App Engine cron, as onSchedule takes them)", () => {
  it('reads every N minutes or hours, seconds for a local override, and every day HH:MM (UTC)', () => {
    expect(parseSchedule('every 10 minutes')).toEqual({ kind: 'every', ms: 600_000 });
    expect(parseSchedule('every 1 hour')).toEqual({ kind: 'every', ms: 3_600_000 });
    expect(parseSchedule(' Every 5 seconds ')).toEqual({ kind: 'every', ms: 5_000 });
    expect(parseSchedule('every day 03:17')).toEqual({ kind: 'daily', minuteOfDay: 3 * 60 + 17 });
    for (const refused of ['*/5 * * * *', 'every 0 minutes', 'every day 24:00', 'every fortnight']) {
      expect(() => parseSchedule(refused)).toThrow(/not a schedule the local scheduler knows/);
    }
  });

  it('fires an interval after its length and a daily time at the next occurrence', () => {
    const at = Date.UTC(2026, 10, 26, 3, 0, 0);
    expect(nextRun({ kind: 'every', ms: 600_000 }, at)).toBe(at + 600_000);
    expect(nextRun(parseSchedule('every day 03:17'), at)).toBe(Date.UTC(2026, 10, 26, 3, 17));
    expect(nextRun(parseSchedule('every day 03:17'), Date.UTC(2026, 10, 26, 3, 17))).toBe(
      Date.UTC(2026, 10, 27, 3, 17),
    );
  });

  it('takes GOODY_SCHEDULES as name=schedule pairs and names a malformed one', () => {
    expect(parseScheduleOverrides('reconcile-deliveries=every 3 seconds; retention=every 1 minute')).toEqual(
      new Map([
        ['reconcile-deliveries', { kind: 'every', ms: 3_000 }],
        ['retention', { kind: 'every', ms: 60_000 }],
      ]),
    );
    expect(parseScheduleOverrides(undefined).size).toBe(0);
    expect(() => parseScheduleOverrides('retention')).toThrow(/"retention" is not name=schedule/);
  });
});

describe('the local scheduler against a Functions emulator', () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());

  /**
   * The two routes of firebase-tools' Functions emulator it uses, as that emulator answers them: GET /backends
   * (each trigger's id, name and schedule) and POST /functions/projects/<p>/triggers/<id>-<generation>, which
   * answers "No function with key" for a generation the emulator has reloaded past.
   */
  async function emulator(generation: number) {
    const fired: string[] = [];
    const server = createServer((request, response) => {
      if (request.method === 'GET' && request.url === '/backends') {
        response.end(
          JSON.stringify({
            backends: [
              {
                functionTriggers: [
                  {
                    id: 'us-central1-retention',
                    name: 'retention',
                    schedule: { schedule: 'every day 03:17' },
                  },
                  { id: 'us-central1-tick', name: 'tick', schedule: { schedule: 'every 10 minutes' } },
                  { id: 'us-central1-unsubscribe', name: 'unsubscribe', httpsTrigger: {} },
                ],
              },
            ],
          }),
        );
        return;
      }
      const key = /\/triggers\/(.*)$/.exec(request.url ?? '')?.[1] ?? '';
      if (key.endsWith(`-${generation}`)) {
        fired.push(key);
        response.end('{}');
      } else {
        response.statusCode = 500;
        response.end(`No function with key ${key}`);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    close = () => server.close();
    return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, fired };
  }

  it('reads the scheduled functions, fires one on its (overridden) schedule, and finds its trigger key after reloads', async () => {
    const { origin, fired } = await emulator(2);
    const logged: string[] = [];
    const scheduler = new LocalScheduler({
      functionsOrigin: origin,
      projectId: 'demo-goody',
      overrides: parseScheduleOverrides('tick=every 1 second'),
      log: (line) => logged.push(line),
      tickMs: 100,
    });
    expect(await scheduler.start()).toEqual(['retention (its schedule)', 'tick (GOODY_SCHEDULES)']);
    await expect.poll(() => fired.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    await scheduler.stop();
    // Only the overridden one was due; the daily one waits for 03:17.
    expect(new Set(fired)).toEqual(new Set(['us-central1-tick-2']));
    expect(logged).toEqual([]);
  });
});

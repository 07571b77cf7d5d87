// Cloud Scheduler for the local stack. The Functions emulator loads a scheduled function (onSchedule) but never
// fires it, and its Pub/Sub emulator cannot deliver to a 2nd-gen one. So the launcher reads the loaded functions
// and their schedules (`GET /backends`) and POSTs to each one's trigger route on its schedule
// (`/functions/projects/<project>/triggers/<region>-<name>-<n>`, n counting the emulator's reloads), never two
// runs of one at once (maxInstances: 1). `GOODY_SCHEDULES` may shorten a schedule locally.

import { LauncherError } from './errors.ts';

export type Schedule = { kind: 'every'; ms: number } | { kind: 'daily'; minuteOfDay: number };

const UNIT_MS: Record<string, number> = {
  second: 1_000,
  minute: 60_000,
  min: 60_000,
  hour: 3_600_000,
};

/**
 * The App Engine cron forms the functions use: `every N minutes|hours` (and, for a local override, seconds)
 * and `every day HH:MM` (UTC; the functions all say timeZone Etc/UTC). Anything else is refused by name.
 */
export function parseSchedule(text: string): Schedule {
  const trimmed = text.trim().toLowerCase();
  const every = /^every (\d+) (second|minute|min|hour)s?$/.exec(trimmed);
  if (every) {
    const ms = Number(every[1]) * (UNIT_MS[every[2] as string] as number);
    if (ms > 0) return { kind: 'every', ms };
  }
  const daily = /^every day (\d{1,2}):(\d{2})$/.exec(trimmed);
  if (daily) {
    const [hours, minutes] = [Number(daily[1]), Number(daily[2])];
    if (hours < 24 && minutes < 60) return { kind: 'daily', minuteOfDay: hours * 60 + minutes };
  }
  throw new LauncherError(
    `"${text}" is not a schedule the local scheduler knows (every N seconds|minutes|hours, every day HH:MM).`,
    2,
  );
}

/** The first time after `after` (ms) that the schedule fires. */
export function nextRun(schedule: Schedule, after: number): number {
  if (schedule.kind === 'every') return after + schedule.ms;
  const day = 24 * 3_600_000;
  const startOfDay = Math.floor(after / day) * day;
  const today = startOfDay + schedule.minuteOfDay * 60_000;
  return today > after ? today : today + day;
}

/** `GOODY_SCHEDULES`: `name=schedule` pairs separated by `;`, each schedule one parseSchedule reads. */
export function parseScheduleOverrides(raw: string | undefined): Map<string, Schedule> {
  const overrides = new Map<string, Schedule>();
  for (const pair of (raw ?? '').split(';')) {
    if (!pair.trim()) continue;
    const [name, schedule] = pair.split('=');
    if (!name?.trim() || !schedule) {
      throw new LauncherError(`GOODY_SCHEDULES: "${pair}" is not name=schedule.`, 2);
    }
    overrides.set(name.trim(), parseSchedule(schedule));
  }
  return overrides;
}

interface ScheduledFunction {
  /** `<region>-<name>`, as the emulator keys it. */
  id: string;
  name: string;
  schedule: Schedule;
  next: number;
  running: boolean;
}

export interface SchedulerOptions {
  /** The Functions emulator, e.g. http://127.0.0.1:5001. */
  functionsOrigin: string;
  projectId: string;
  overrides: Map<string, Schedule>;
  log: (line: string) => void;
  now?: () => number;
  tickMs?: number;
}

/** How often the list of loaded functions is read again (npm run dev reloads them on save). */
const REFRESH_MS = 15_000;
/** Reloads of the emulator's triggers tried past the last known one, when a trigger key is not found. */
const GENERATIONS_TRIED = 20;

export class LocalScheduler {
  private readonly functions = new Map<string, ScheduledFunction>();
  private timer: NodeJS.Timeout | undefined;
  private refreshedAt = 0;
  private generation = 0;
  private stopped = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly options: SchedulerOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Reads the scheduled functions once (so the banner can name them), then ticks until stop(). */
  async start(): Promise<string[]> {
    await this.refresh();
    this.timer = setInterval(() => void this.tick(), this.options.tickMs ?? 500);
    this.timer.unref();
    return [...this.functions.values()].map(
      (fn) => `${fn.name} (${this.options.overrides.has(fn.name) ? 'GOODY_SCHEDULES' : 'its schedule'})`,
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }

  /** The emulator's loaded functions with a schedule, by name; new ones get their first time, gone ones go. */
  async refresh(): Promise<void> {
    this.refreshedAt = this.now();
    let backends: { backends?: Array<{ functionTriggers?: Array<Record<string, unknown>> }> };
    try {
      const response = await fetch(`${this.options.functionsOrigin}/backends`);
      backends = (await response.json()) as typeof backends;
    } catch {
      return; // the emulator is reloading or stopping: the next refresh reads it again
    }
    const seen = new Set<string>();
    for (const { id, name, schedule } of (backends.backends ?? []).flatMap((b) => b.functionTriggers ?? [])) {
      const cron = (schedule as { schedule?: unknown } | undefined)?.schedule;
      if (typeof cron !== 'string' || typeof id !== 'string' || typeof name !== 'string') continue;
      seen.add(name);
      if (this.functions.has(name)) continue;
      try {
        const parsed = this.options.overrides.get(name) ?? parseSchedule(cron);
        this.functions.set(name, {
          id,
          name,
          schedule: parsed,
          next: nextRun(parsed, this.now()),
          running: false,
        });
      } catch (error) {
        this.options.log(`[scheduler] ${name} is not fired locally: ${(error as Error).message}`);
      }
    }
    for (const name of this.functions.keys()) if (!seen.has(name)) this.functions.delete(name);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.now() - this.refreshedAt >= REFRESH_MS) await this.refresh();
    for (const fn of this.functions.values()) {
      if (fn.running || this.now() < fn.next) continue;
      fn.running = true;
      const run = this.fire(fn).finally(() => {
        fn.running = false;
        fn.next = nextRun(fn.schedule, this.now());
        this.inFlight.delete(run);
      });
      this.inFlight.add(run);
    }
  }

  /** Calls the function as the emulator serves a scheduled one; a failed run is logged, as Cloud Scheduler logs it. */
  async fire(fn: Pick<ScheduledFunction, 'id' | 'name'>): Promise<number> {
    const { functionsOrigin, projectId } = this.options;
    const last = this.generation + GENERATIONS_TRIED;
    for (let generation = this.generation; generation < last; generation += 1) {
      const trigger = `${functionsOrigin}/functions/projects/${projectId}/triggers/${fn.id}-${generation}`;
      const json = { 'content-type': 'application/json' };
      let response: Response;
      try {
        response = await fetch(trigger, { method: 'POST', headers: json, body: '{}' });
      } catch (error) {
        if (!this.stopped)
          this.options.log(`[scheduler] ${fn.name} could not be called: ${(error as Error).message}`);
        return 0;
      }
      const text = await response.text();
      // The emulator reloaded its triggers since (their keys count the reloads): try the next key.
      if (!response.ok && /No function with key/.test(text)) continue;
      this.generation = generation;
      if (!response.ok && !this.stopped) {
        this.options.log(`[scheduler] ${fn.name} failed: HTTP ${response.status} ${text.slice(0, 200)}`);
      }
      return response.status;
    }
    this.options.log(`[scheduler] ${fn.name} is not loaded under any trigger key tried.`);
    return 0;
  }
}

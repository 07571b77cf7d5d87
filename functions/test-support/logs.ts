// The logger and clock doubles of the functions' tests: a logger that records every event, the clock ahead.

import { type Clock, systemClock } from '../src/clock';
import type { LogEvent, LogFields, Logger } from '../src/logs';

export interface LogEntry {
  severity: 'info' | 'warn' | 'error';
  event: LogEvent;
  fields: LogFields;
}

export interface RecordingLogger extends Logger {
  entries: LogEntry[];
  events(): LogEvent[];
  /** Everything logged, as one string, to search for what must never be there. */
  text(): string;
}

export function recordingLogger(): RecordingLogger {
  const entries: LogEntry[] = [];
  const record =
    (severity: LogEntry['severity']) =>
    (event: LogEvent, fields: LogFields = {}) => {
      entries.push({ severity, event, fields });
    };
  return {
    entries,
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
    events: () => entries.map((entry) => entry.event),
    text: () => JSON.stringify(entries),
  };
}

/** The system clock seen `offsetMs` later: for leases that must look expired. */
export function clockAhead(offsetMs: number): Clock {
  return { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
}

// A read of the machine's process table, enough to find every process a child started. firebase-tools starts
// the Firebase Firestore emulator's java in a process group of its own (detached), so killing the group of the
// process the launcher started is not enough: the launcher remembers the whole tree and ends what is left.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export interface ProcessEntry {
  pid: number;
  /** One letter: R running, S sleeping, Z zombie (dead, waiting to be reaped), ... */
  state: string;
  ppid: number;
  pgid: number;
  /** Identifies this process among all that will ever have its pid (clock ticks since boot on Linux). */
  startTime: string;
}

function readProcStat(pid: number): ProcessEntry | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name sits in parentheses and may itself contain spaces or parentheses: parse after the last ')'.
  // Then the state, ppid, pgrp, session, ...; starttime is field 22 of the whole line.
  const [state = '?', ppid, pgid, ...rest] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, state, ppid: Number(ppid), pgid: Number(pgid), startTime: rest[16] ?? '' };
}

function listFromProc(): ProcessEntry[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => readProcStat(Number(name)) ?? []);
}

function listFromPs(): ProcessEntry[] {
  const output = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart='], { encoding: 'utf8' });
  return output
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((parts) => parts.length >= 4)
    .map(([pid, ppid, pgid, stat, ...start]) => ({
      pid: Number(pid),
      state: (stat ?? '?').slice(0, 1),
      ppid: Number(ppid),
      pgid: Number(pgid),
      startTime: start.join(' '),
    }));
}

const hasProc = existsSync('/proc/self/stat');

export function listProcesses(): ProcessEntry[] {
  try {
    return hasProc ? listFromProc() : listFromPs();
  } catch {
    return [];
  }
}

/** Every process below the given pids (not the pids themselves), as the table is now. */
export function descendantsOf(rootPids: readonly number[], table = listProcesses()): ProcessEntry[] {
  const pids = new Set(rootPids);
  const found: ProcessEntry[] = [];
  for (let grew = true; grew; ) {
    grew = false;
    for (const entry of table) {
      if (!pids.has(entry.ppid) || pids.has(entry.pid)) continue;
      pids.add(entry.pid);
      found.push(entry);
      grew = true;
    }
  }
  return found;
}

/**
 * True while this very process (not a later one that reused its pid) is still running. A zombie is not: it has
 * ended and holds no port, it only waits for its parent (or init) to collect its exit status.
 */
export function isStillRunning(entry: ProcessEntry): boolean {
  if (hasProc) {
    const now = readProcStat(entry.pid);
    return now !== undefined && now.startTime === entry.startTime && now.state !== 'Z';
  }
  try {
    process.kill(entry.pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function commandLineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every running process whose environment, as it was started, holds `name=value`: a mark a test run or a stack
 * hands down to everything it starts (children inherit it, firebase-tools passes it to its workers and java), so
 * what outlived it is found even once re-parented or in a group of its own. Linux (/proc) only; elsewhere none.
 */
export function processesMarked(name: string, value: string): ProcessEntry[] {
  if (!hasProc) return [];
  // Each variable ends with a NUL; one more in front matches the mark as a whole variable, the first one too.
  const mark = Buffer.from(`\0${name}=${value}\0`);
  return listProcesses().filter((entry) => {
    if (entry.pid === process.pid || entry.state === 'Z') return false;
    try {
      return Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${entry.pid}/environ`)]).includes(mark);
    } catch {
      return false;
    }
  });
}

/** SIGKILL to each process (and to its group, if it leads one); those already gone are skipped. */
export function killProcesses(entries: readonly ProcessEntry[]): void {
  for (const entry of entries) {
    if (!isStillRunning(entry)) continue;
    for (const target of entry.pgid === entry.pid && entry.pid > 1 ? [-entry.pid, entry.pid] : [entry.pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}

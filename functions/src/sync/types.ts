import type { FieldPath, Firestore } from 'firebase-admin/firestore';
import type { Clock } from '../clock';
import type { Logger } from '../logs';
import type { MailerLiteClient } from '../mailerlite/client';
import type { GroupConfig } from '../mailerlite/groups';
import type { MailerLiteStop } from '../mailerlite/meaning';
import type { Mailboxes } from '../privacy/mailboxes';

// What a run of the sync (./run.ts) is given, how it may be tuned, and what it gives back.

export interface SyncOptions {
  /** Sign-ups read from Firestore per query. */
  pageSize: number;
  /** How long the lease lasts without renewal; a crashed run blocks the next one at most this long. */
  leaseMs: number;
  /** Single upserts sent at once while the import limit holds batches back. */
  singleConcurrency: number;
  /** Requests of the global budget kept back for batches while the import limit holds them. */
  importReserve: number;
  /** Times one contact may fail transiently (inside batches) before the run gives up on MailerLite. */
  maxContactFailures: number;
  /** How long after a run ended (but at its deadline) the next may start. */
  minIntervalMs: number;
}

export const DEFAULT_SYNC_OPTIONS: SyncOptions = {
  pageSize: 500,
  // Longer than the longest single wait (a Retry-After of at most a minute, or one request's
  // timeout), and renewed at a third of it, so a live run never loses its lease while waiting.
  leaseMs: 3 * 60_000,
  singleConcurrency: 8,
  importReserve: 5,
  maxContactFailures: 5,
  minIntervalMs: 60_000,
};

export type SyncProgressEvent =
  | { type: 'batch'; confirmed: number; rejected: number; retry: number }
  | { type: 'single'; confirmed: number; rejected: number; retry: number }
  | { type: 'checkpoint'; synced: number };

/** How a run stopped short: MailerLite failed it (mailerlite/meaning.ts, failureOf), or the database did. */
export type SyncFailure = MailerLiteStop | 'lease_lost' | 'database';

export type SyncStop =
  | { kind: 'done' }
  | { kind: 'deadline' }
  /** `detail`: what an operator must fix, for the logs (the reply gives the reason's general message). */
  | { kind: 'failed'; reason: SyncFailure; detail?: string };

/** The outside world of a run, as the sync callable is given it. */
export interface SyncWorld {
  db: Firestore;
  client: MailerLiteClient;
  groups: GroupConfig;
  clock: Clock;
  logger: Logger;
  /** The suppression list and the contact records, with their keys (privacy/mailboxes.ts). */
  mailboxes: Mailboxes;
  /** Observes the run's steps; tests throw from it to crash the run between two steps. */
  onProgress?: (event: SyncProgressEvent) => void | Promise<void>;
}

export interface SyncRunDeps extends SyncWorld {
  documentId: FieldPath;
  /** Clock ms after which no request starts and no wait lasts. */
  stopAt: number;
  options: SyncOptions;
}

export type SyncResult =
  /** Another run holds the lease. */
  | { kind: 'running' }
  /** The last run ended less than the minimum interval ago. */
  | { kind: 'too_soon'; waitMs: number }
  /** The lease could not be read or written: nothing was done. */
  | { kind: 'database_unavailable' }
  /** The groups could not be resolved: nothing was sent. */
  | { kind: 'groups_failed'; reason: MailerLiteStop }
  | {
      kind: 'ran';
      stop: SyncStop;
      /** Distinct addresses handled: confirmed, delivered before, or passed as unsubscribed (Run.toSend). */
      synced: number;
      rejected: number;
      skipped: number;
      /** Sign-ups still after the cursor (null when Firestore could not count them). */
      remaining: number | null;
    };

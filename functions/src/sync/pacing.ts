import type { Logger } from '../logs';
import { BATCH_MAX_REQUESTS, type MailerLiteClient } from '../mailerlite/client';
import { type MailerLiteError, MailerLiteRateLimitError } from '../mailerlite/errors';
import type { Contact } from './pages';

/** How the next step goes out: a batch, a wave of single upserts, or not yet. */
export type Pace =
  | { kind: 'batch'; contacts: Contact[] }
  | { kind: 'single'; contacts: Contact[] }
  | { kind: 'wait'; until: number };

export interface PacingOptions {
  /** Single upserts sent at once while the import limit holds batches back. */
  singleConcurrency: number;
  /**
   * Requests of the global budget kept back for batches while the import limit holds them: MailerLite's
   * import limit (5 a minute). Spending them on single upserts would cost 49 contacts each.
   */
  importReserve: number;
}

// Added to a Retry-After so the next request lands after the window, not on its edge.
const RATE_LIMIT_SLACK_MS = 50;

/**
 * MailerLite's two limits as the run reads them from its answers: the global budget (120 requests
 * a minute, as X-RateLimit-Remaining reports it) and the import limit (5 a minute, which batches of
 * upserts count against). Batches of 50 while the import limit has room; while it has not, single
 * upserts with the global budget down to the 5 requests the batches need when it reopens; and a
 * wait of exactly Retry-After when a budget is spent. That is the most contacts the limits let
 * through: 5 x 50 + (120 - 5) x 1 = 365 a minute.
 */
export class Pacing {
  private globalClosedUntil = 0;
  private importClosedUntil = 0;

  constructor(
    private readonly client: MailerLiteClient,
    private readonly logger: Logger,
    private readonly options: PacingOptions,
  ) {}

  /** When the global budget reopens, if it is spent at `now`; null while it has room. */
  globalReopensAt(now: number): number | null {
    return now < this.globalClosedUntil ? this.globalClosedUntil : null;
  }

  /** The most addresses the next step can carry at `now`. */
  stepSize(now: number): number {
    return this.importOpen(now) ? BATCH_MAX_REQUESTS : this.options.singleConcurrency;
  }

  /** How `contacts` (at most stepSize(now) of them) go out at `now`. */
  pace(now: number, contacts: Contact[]): Pace {
    const importOpen = this.importOpen(now);
    if (importOpen && contacts.length >= 2) return { kind: 'batch', contacts };
    // While batches wait for the import limit, singles may spend the global budget down to what
    // the batches will need once it reopens (when there is enough work for a batch at all).
    const reserve = !importOpen && contacts.length >= 2 ? this.options.importReserve : 0;
    // A count seen before the global window last reset says nothing about the new one.
    const seen = this.client.rateLimit;
    const remaining = seen.observedAt < this.globalClosedUntil ? null : seen.remaining;
    const room = remaining === null ? this.options.singleConcurrency : remaining - reserve;
    if (reserve > 0 && room <= 0) return { kind: 'wait', until: this.importClosedUntil };
    const size = Math.max(1, Math.min(this.options.singleConcurrency, room));
    return { kind: 'single', contacts: contacts.slice(0, size) };
  }

  /** A request refused with 429: closes the window that refused it until its Retry-After has passed. */
  rateLimited(error: MailerLiteError, now: number): void {
    const retryAfterMs = error instanceof MailerLiteRateLimitError ? error.retryAfterMs : null;
    const until = now + (retryAfterMs ?? 1_000) + RATE_LIMIT_SLACK_MS;
    if (error instanceof MailerLiteRateLimitError && error.importLimited) {
      this.importClosedUntil = Math.max(this.importClosedUntil, until);
    } else {
      this.globalClosedUntil = Math.max(this.globalClosedUntil, until);
      this.logger.info('sync.rate_limited', { wait_ms: until - now });
    }
  }

  private importOpen(now: number): boolean {
    return now >= this.importClosedUntil;
  }
}

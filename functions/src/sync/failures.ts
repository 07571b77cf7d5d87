import type { Logger } from '../logs';
import {
  MailerLiteConfiguredGroupError,
  MailerLiteError,
  MailerLiteTimeoutError,
} from '../mailerlite/errors';
import { classify, failureOf, type Meaning } from '../mailerlite/meaning';
import { emailFields } from '../privacy/log-fields';
import type { HandOff } from '../privacy/suppression';
import type { Pacing } from './pacing';
import type { RequestFailure } from './send';
import type { SyncFailure } from './types';

/**
 * What a run makes of what went wrong (mailerlite/meaning.ts says what each MailerLite answer means): the
 * first failure that stops the run is kept, with what an operator must fix; a rate limit is the pacing's
 * to wait out, not a failure; a request cut by the run's deadline is no failure either; a contact refused
 * transiently inside batches stops the run only once it has been refused `maxContactFailures` times.
 */
export class RunFailures {
  private first: { reason: SyncFailure; detail?: string } | null = null;
  private readonly transient = new Map<string, number>();

  constructor(
    private readonly deps: { logger: Logger; pacing: Pacing; stopAt: number; maxContactFailures: number },
  ) {}

  /** What stopped the run, if anything has. */
  get stopped(): { reason: SyncFailure; detail?: string } | null {
    return this.first;
  }

  /** Stops the run, unless something stopped it already; a detail (what to fix) goes to the logs. */
  stop(reason: SyncFailure, detail?: string): void {
    if (this.first) return;
    this.first = detail === undefined ? { reason } : { reason, detail };
    if (detail !== undefined) this.deps.logger.error('sync.failed', { reason, detail });
  }

  /** A request that failed as a whole; its contacts stay unsettled. */
  request({ error, at }: RequestFailure): void {
    if (classify(error) === 'rate_limited') {
      this.deps.pacing.rateLimited(error, at);
      return;
    }
    if (error instanceof MailerLiteTimeoutError && at >= this.deps.stopAt - 1_000) return; // cut by the deadline
    this.stop(failureOf(error).stop);
  }

  /**
   * MailerLite failed to forget a contact pushed while the person unsubscribed: the person asked to be
   * gone, so it is logged as such, and the forget waits on the suppression entry for its finish task
   * (`finishTask`, what came of handing it on) and scheduled/pending-erasures.ts.
   */
  forgetPending(email: string, finishTask: HandOff, failure: RequestFailure): void {
    this.deps.logger.error('sync.failed', {
      reason: 'forget_erased',
      forget_pending: true,
      finish_task: finishTask,
      ...emailFields(email),
    });
    this.request(failure);
  }

  /**
   * A refused group that could not be resolved again: a configured id stops the run, naming the param to
   * fix; a timeout at the deadline is `deadline` (the run waits for its stop); anything else fails as a
   * request does (a 429 leaves the refusal to be resolved again once the wait is over). Throws what is not
   * a MailerLite error.
   */
  groupNotResolved(error: unknown, at: number): 'deadline' | null {
    if (!(error instanceof MailerLiteError)) throw error;
    if (error instanceof MailerLiteConfiguredGroupError) this.stop('mailerlite_config', error.message);
    else if (error instanceof MailerLiteTimeoutError && at >= this.deps.stopAt - 1_000) return 'deadline';
    else this.request({ error, at });
    return null;
  }

  /** An entry of a batch MailerLite refused about this contact alone (`meaning` not ok, invalid or group_gone). */
  entry(email: string, meaning: Meaning): void {
    if (meaning === 'auth') this.stop('mailerlite_auth');
    else if (meaning === 'config' || meaning === 'unexpected') this.stop('mailerlite_config');
    else {
      const failures = (this.transient.get(email) ?? 0) + 1;
      this.transient.set(email, failures);
      if (failures >= this.deps.maxContactFailures) this.stop('mailerlite_unavailable');
    }
  }
}

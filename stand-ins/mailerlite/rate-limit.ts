/**
 * A fixed window that starts at the first hit and lasts `windowMs`, as Laravel's throttle middleware (which
 * MailerLite's API runs on) counts; `Retry-After` is the whole seconds until it ends.
 */
export class FixedWindowLimiter {
  private windowStart = 0;
  private hits = 0;

  constructor(
    public limit: number,
    public windowMs: number,
  ) {}

  reset(): void {
    this.hits = 0;
    this.windowStart = 0;
  }

  private roll(now: number): void {
    if (this.hits > 0 && now - this.windowStart >= this.windowMs) this.hits = 0;
  }

  /** Counts one request if the window has room; otherwise leaves the count alone and refuses. */
  tryHit(now: number): boolean {
    this.roll(now);
    if (this.hits >= this.limit) return false;
    if (this.hits === 0) this.windowStart = now;
    this.hits += 1;
    return true;
  }

  remaining(now: number): number {
    this.roll(now);
    return Math.max(0, this.limit - this.hits);
  }

  /** Whole seconds until the current window ends (at least 1, as an HTTP Retry-After must be). */
  retryAfterSeconds(now: number): number {
    this.roll(now);
    if (this.hits === 0) return 0;
    return Math.max(1, Math.ceil((this.windowStart + this.windowMs - now) / 1000));
  }
}

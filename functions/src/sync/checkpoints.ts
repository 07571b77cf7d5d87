import type { Clock } from '../clock';
import { LeaseLostError } from '../lease';
import type { RunFailures } from './failures';
import type { Backlog } from './pages';
import type { SyncState } from './state';
import type { SyncProgressEvent } from './types';

/**
 * A run's checkpoints under its lease (./state.ts): the cursor is written once it has moved over settled
 * sign-ups, and the lease renewed when a third of it has passed, or before a wait that would take it close
 * to expiring. A write that fails stops the run: `lease_lost` when another run took the lease over (then
 * nothing more is written), `database` otherwise.
 */
export class Checkpoints {
  private cursorDirty = false;

  constructor(
    private readonly state: SyncState,
    private readonly backlog: Backlog,
    private readonly failures: RunFailures,
    private readonly deps: {
      clock: Clock;
      leaseMs: number;
      stopAt: number;
      onProgress?: (event: SyncProgressEvent) => void | Promise<void>;
      /** Distinct addresses the run has handled, for the progress event. */
      synced: () => number;
    },
  ) {}

  /** Moves the cursor over what is settled; written at the next checkpoint. */
  advance(): void {
    if (this.backlog.advance()) this.cursorDirty = true;
  }

  /** Writes the cursor when it moved, and renews the lease when a third of it has passed (or when forced). */
  async write(force: boolean): Promise<void> {
    if (this.failures.stopped?.reason === 'lease_lost') return;
    const { clock, leaseMs } = this.deps;
    const due = force || this.cursorDirty || clock.now() - this.state.leaseRenewedAt >= leaseMs / 3;
    if (!due) return;
    try {
      await this.state.checkpoint(this.cursorDirty ? (this.backlog.cursor ?? undefined) : undefined);
      this.cursorDirty = false;
    } catch (error) {
      this.failures.stop(error instanceof LeaseLostError ? 'lease_lost' : 'database');
      return;
    }
    await this.deps.onProgress?.({ type: 'checkpoint', synced: this.deps.synced() });
  }

  /** Waits until `until` (never past the run's stop), renewing the lease first if the wait needs it. */
  async waitUntil(until: number): Promise<void> {
    const { clock, leaseMs, stopAt } = this.deps;
    const target = Math.min(until, stopAt);
    if (target - this.state.leaseRenewedAt > leaseMs / 3) await this.write(true);
    const ms = target - clock.now();
    if (ms > 0 && !this.failures.stopped) await clock.sleep(ms);
  }
}

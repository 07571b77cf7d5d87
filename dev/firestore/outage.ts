import type { Faults } from './faults.ts';

/**
 * Holds or drops document requests while the `unavailable` fault is on. A held request is dropped when
 * the fault is lifted (or the stand-in stops): a request sent to a service that was not answering
 * never gets a late success.
 */
export class Outage {
  private readonly held = new Set<() => void>();
  private readonly unsubscribe: () => void;

  constructor(private readonly faults: Faults) {
    this.unsubscribe = faults.onUnavailableChange((mode) => {
      if (mode === false || mode === 'drop') this.releaseAll();
    });
  }

  /**
   * Returns true when the request may be answered. Otherwise `drop` has been called (now, or later when
   * a held request is released); `onClose` registration lets a request the client abandons be forgotten.
   */
  admit(drop: () => void, onClose: (forget: () => void) => void): boolean {
    const mode = this.faults.unavailable;
    if (mode === false) return true;
    if (mode === 'drop') {
      drop();
      return false;
    }
    this.held.add(drop);
    onClose(() => this.held.delete(drop));
    return false;
  }

  get heldCount(): number {
    return this.held.size;
  }

  releaseAll(): void {
    const drops = [...this.held];
    this.held.clear();
    for (const drop of drops) drop();
  }

  close(): void {
    this.unsubscribe();
    this.releaseAll();
  }
}

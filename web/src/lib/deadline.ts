/**
 * Settles as `work` does if it settles within `ms`; otherwise rejects with `timeoutError()` then.
 *
 * The timer is cleared the moment `work` settles, so a fast answer leaves nothing behind. When the
 * deadline wins, `work` keeps running (Firestore Lite offers no way to cancel a request), but its late
 * answer or failure goes nowhere: `Promise.race` has already settled and holds the only handler, so a
 * late failure is never an unhandled rejection and never reaches state.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, timeoutError: () => unknown): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError()), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

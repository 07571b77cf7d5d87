type IdleWindow = Window & {
  requestIdleCallback?: (callback: () => void, options?: { timeout: number }) => number;
  cancelIdleCallback?: (handle: number) => void;
};

/**
 * Runs `callback` the next time the browser is idle (after the work already scheduled), or after
 * `timeoutMs` at the latest; where there is no requestIdleCallback, after `fallbackMs`. Returns a cancel
 * function.
 */
export function onIdle(
  callback: () => void,
  { timeoutMs, fallbackMs }: { timeoutMs: number; fallbackMs: number },
  target: IdleWindow = window,
): () => void {
  let cancelled = false;
  const run = () => {
    if (!cancelled) callback();
  };
  if (target.requestIdleCallback) {
    const handle = target.requestIdleCallback(run, { timeout: timeoutMs });
    return () => {
      cancelled = true;
      target.cancelIdleCallback?.(handle);
    };
  }
  const timer = setTimeout(run, fallbackMs);
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}

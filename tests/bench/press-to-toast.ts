// Runs in the page, armed before the press: from the visitor's press (`click`: a click on a form's submit
// button; `enter`: the first Enter in a field of a form, captured before the app sees it) to the first frame
// that shows the success toast. window.__pressToToast resolves with the ms between and both moments on the
// epoch clock (to match a network record); an error toast rejects it. Plain JavaScript, so the bundler adds
// nothing to the page.

export interface PressToToast {
  measuredMs: number;
  pressAt: number;
  toastAt: number;
}

export function armPressToToast(press: 'click' | 'enter'): string {
  const pressed =
    press === 'click'
      ? `event.type === 'click' && event.target instanceof Element && event.target.closest('form button[type="submit"]')`
      : `event.type === 'keydown' && event.key === 'Enter' && event.target instanceof Element && event.target.closest('form')`;
  return `(() => {
  window.__pressToToast = new Promise((resolve, reject) => {
    let pressedAt;
    document.addEventListener('${press === 'click' ? 'click' : 'keydown'}', (event) => {
      if (${pressed}) pressedAt ${press === 'click' ? '=' : '??='} performance.now();
    }, { capture: true });
    const observer = new MutationObserver(() => {
      const toast = pressedAt === undefined ? null : document.querySelector('[data-variant]');
      if (!toast) return;
      observer.disconnect();
      if (toast.getAttribute('data-variant') !== 'success') reject(new Error('error toast: ' + toast.textContent));
      else requestAnimationFrame(() => {
        const toastAt = performance.now();
        resolve({
          measuredMs: toastAt - pressedAt,
          pressAt: performance.timeOrigin + pressedAt,
          toastAt: performance.timeOrigin + toastAt,
        });
      });
    });
    observer.observe(document.documentElement, { childList: true, subtree: true });
  });
})()`;
}

/** What the armed page measured (armPressToToast), once its toast showed. */
export const MEASURED = 'window.__pressToToast';

/**
 * The entry, kept tiny on purpose. The landing page arrives prerendered and paints from its HTML and
 * CSS alone; fetching, compiling and running the app before that first paint would only delay it,
 * most on the slow phones that can least afford it. So the app is imported once the page has painted.
 * The app shell of every other route has nothing to paint yet, and starts the app at once.
 */
const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');

let started = false;
const startApp = () => {
  if (started) return;
  started = true;
  // All fetched at once. Each import() evaluates its own module graph as soon as that has arrived, so
  // React DOM and the theme (parts of the app's graph) run in tasks of their own before the rest of the
  // app, instead of everything in one long task that would hold up any input.
  void import('react-dom/client');
  void import('@/theme/theme');
  import('./client')
    .then(({ start }) => start(container))
    // The prerendered page stays readable; only its form cannot work without the app.
    .catch((error: unknown) => console.error('The app failed to load:', error));
};

const FIRST_PAINT = 'first-contentful-paint';
if (!container.firstElementChild || document.visibilityState !== 'visible') {
  // Nothing prerendered to paint, or a background tab, which paints nothing until it is shown.
  startApp();
} else if (PerformanceObserver.supportedEntryTypes?.includes('paint')) {
  // The browser's own record of the first contentful paint (buffered: it may already have happened).
  new PerformanceObserver((list, observer) => {
    if (list.getEntriesByName(FIRST_PAINT).length === 0) return;
    observer.disconnect();
    startApp();
  }).observe({ type: 'paint', buffered: true });
  // A paint that goes unreported must not leave the form without its app.
  setTimeout(startApp, 3000);
} else {
  // Without paint timing: a timeout queued from an animation frame runs once that frame is painted.
  requestAnimationFrame(() => setTimeout(startApp, 0));
}

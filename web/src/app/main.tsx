/**
 * The entry, kept tiny on purpose. On the landing page the inline bootstrap inserts it only once the
 * visitor engages (or submits): the page paints and reads from its prerendered HTML and CSS alone, and
 * runs no app code for a visitor who only reads; then only the forms and the toasts hydrate (islands.tsx).
 * The app shell of every other route (/admin, the not-found page) loads it directly, and it starts the
 * whole app at once (client.tsx).
 */
const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');

function wholeApp() {
  // Fetched at once: each import() evaluates its own module graph as soon as it has arrived, so React DOM
  // and the theme run in tasks of their own before the rest of the app, not in one long task.
  void import('react-dom/client');
  void import('@/theme/theme');
  return import('./client');
}

// SignupForm's SIGNUP_ISLAND_ATTRIBUTE, spelled out: importing it would pull the form into this entry.
(container.querySelector('[data-signup-island]') ? import('./islands') : wholeApp())
  .then(({ start }) => start(container))
  // The prerendered page stays readable; a captured sign-up tells the visitor when the app never comes.
  .catch((error: unknown) => console.error('The app failed to load:', error));

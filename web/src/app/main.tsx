/**
 * The entry, kept tiny on purpose. On the landing page the inline bootstrap inserts it only once the
 * visitor engages (or submits): the page paints and reads from its prerendered HTML and CSS alone, and
 * runs no app code for a visitor who only reads. The app shell of every other route (/admin, the
 * not-found page) loads it directly, and it starts the app at once.
 */
const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');

// All fetched at once. Each import() evaluates its own module graph as soon as that has arrived, so
// React DOM and the theme (parts of the app's graph) run in tasks of their own before the rest of the
// app, instead of everything in one long task that would hold up any input.
void import('react-dom/client');
void import('@/theme/theme');
import('./client')
  .then(({ start }) => start(container))
  // The prerendered page stays readable; a captured sign-up tells the visitor when the app never comes.
  .catch((error: unknown) => console.error('The app failed to load:', error));

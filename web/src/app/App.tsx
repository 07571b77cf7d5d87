import { lazy, Suspense } from 'react';
import { Route, Routes } from 'react-router-dom';
import { LandingPage } from '@/pages/landing/LandingPage';
import { AppProviders } from './AppProviders';

// The landing page ships in the initial chunk; the rest load on demand (docs/architecture.md, Web).
const AdminPage = lazy(() =>
  import('@/pages/admin/AdminPage').then((module) => ({ default: module.AdminPage })),
);
const NotFoundPage = lazy(() =>
  import('@/pages/not-found/NotFoundPage').then((module) => ({ default: module.NotFoundPage })),
);

/** The routes of docs/product.md, Screens. Rendered inside a router: BrowserRouter here, StaticRouter when prerendered. */
export function AppRoutes() {
  return (
    <Suspense fallback={null}>
      <Routes>
        <Route path="/" element={<LandingPage />} />
        <Route path="/admin" element={<AdminPage />} />
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </Suspense>
  );
}

export function App() {
  return (
    <AppProviders>
      <AppRoutes />
    </AppProviders>
  );
}

// @vitest-environment node
/**
 * The landing page will be prerendered with react-dom/server (docs/architecture.md, Web). Rendering it
 * here, where no window or document exists, proves no component touches them at module level or
 * while rendering.
 */
import { renderToString } from 'react-dom/server';
import { StaticRouter } from 'react-router-dom';
import { describe, expect, it, vi } from 'vitest';
import { firebaseMock } from '@/test/firebaseMock';
import { App } from './App';

vi.mock('@/lib/firebase', () => firebaseMock);

describe('server rendering', () => {
  it('renders the whole landing page without a DOM', () => {
    expect(typeof window).toBe('undefined');
    const html = renderToString(
      <StaticRouter location="/">
        <App />
      </StaticRouter>,
    );
    expect(html).toContain('buy and sell style');
    expect(html.match(/type="email"/g)).toHaveLength(2);
    expect(html).toContain('© 2024 GOODY');
    // The live regions that announce toasts are there from the first paint.
    expect(html).toContain('role="status"');
    expect(html).toContain('role="alert"');
  });
});

/**
 * The browser half meeting the server half: the markup the prerender produces, parsed by an HTML parser
 * as the browser parses index.html, then hydrated by islands.tsx's start(). Hydration must match that
 * markup exactly (React reports any difference as an error), leave everything but the forms and the
 * toast layer as it is (same DOM nodes, never touched by React), and leave the sign-up forms working.
 */
import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { TOAST_ISLAND_ATTRIBUTE } from '@/lib/toast/toast';
import { calls, firebaseMock } from '@/test/firebaseMock';
import { withPrerenderedPage } from '@/test/prerenderedPage';

vi.mock('@/lib/firebase', () => firebaseMock);

/** React marks every DOM node it has hydrated or created with a fiber reference. */
const ownedByReact = (node: Node) => Object.keys(node).some((key) => key.startsWith('__reactFiber$'));

const page = withPrerenderedPage();

async function hydrate() {
  const submit = within(page.container).getByRole('button', { name: 'Get Early Access' });
  await act(async () => {
    await page.hydrate();
  });
  await waitFor(() => expect(ownedByReact(submit)).toBe(true));
}

describe('hydrating the prerendered landing page', () => {
  it('matches the prerendered markup: no hydration error, and the DOM is kept, not rebuilt', async () => {
    const heading = screen.getByRole('heading', { level: 1 });
    const forms = page.container.querySelectorAll('form');
    await hydrate();
    expect(page.errors).toEqual([]);
    expect(heading.isConnected).toBe(true);
    expect(screen.getByRole('heading', { level: 1 })).toBe(heading);
    expect([...page.container.querySelectorAll('form')]).toEqual([...forms]);
  });

  it('adopts the static parts as they are: same nodes, never rendered by React', async () => {
    const benefits = screen.getByRole('region', { name: 'Built for teens. Trusted by parents.' });
    const footer = screen.getByRole('contentinfo');
    const mockup = screen.getByRole('figure', { name: 'Sample of the GOODY shopping feed' });
    const before = page.container.innerHTML;
    await hydrate();
    for (const part of [benefits, footer, mockup]) {
      expect(part.isConnected).toBe(true);
      expect(ownedByReact(part)).toBe(false);
    }
    // The one addition is the toast layer's type specimen, rendered after hydration (tested below).
    const after = page.container.cloneNode(true) as HTMLElement;
    after.querySelector('[data-toast-specimen]')?.remove();
    expect(after.innerHTML).toBe(before);
  });

  it('hydrates the toast layer once the browser is idle, after the forms', async () => {
    const idle: Array<() => void> = [];
    vi.stubGlobal('requestIdleCallback', (callback: () => void) => idle.push(callback));
    try {
      const submit = within(page.container).getByRole('button', { name: 'Get Early Access' });
      const layer = page.container.querySelector(`[${TOAST_ISLAND_ATTRIBUTE}]`) as HTMLElement;
      let started: Promise<() => void> = Promise.resolve(() => {});
      await act(async () => {
        started = page.hydrate();
      });
      await waitFor(() => expect(ownedByReact(submit)).toBe(true));
      // The forms are live; the browser has not been idle yet, so the layer is still the prerendered markup.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect([layer, ...layer.querySelectorAll('*')].some(ownedByReact)).toBe(false);
      // The prerendered page carries no type specimen: the page's own first layout stays as it was.
      expect(layer.querySelector('[data-toast-specimen]')).toBeNull();

      await act(async () => {
        for (const callback of idle.splice(0)) callback();
        await started;
      });
      await waitFor(() => expect([layer, ...layer.querySelectorAll('*')].some(ownedByReact)).toBe(true));
      expect(page.errors).toEqual([]);
      // Once hydrated, the toast's type is laid out ahead of the first toast (fonts and emoji resolved then,
      // not in the toast's frame): clipped rather than display:none, and hidden from assistive technology.
      const specimen = await waitFor(() => {
        const found = layer.querySelector('[data-toast-specimen]');
        expect(found).not.toBeNull();
        return found as HTMLElement;
      });
      expect(specimen.getAttribute('aria-hidden')).toBe('true');
      expect(specimen.classList.contains('goody-visually-hidden')).toBe(true);
      for (const part of ['.goody-toast__title', '.goody-toast__description'])
        expect(specimen.querySelector(part)?.textContent, part).toMatch(/\p{Extended_Pictographic}/u);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('leaves the sign-up forms working', async () => {
    await hydrate();
    const user = userEvent.setup();
    const hero = screen.getByRole('region', { name: /The safe, social way for teens/ });
    await user.type(within(hero).getByRole('textbox', { name: 'Email address' }), 'teen@example.com');
    await user.click(within(hero).getByRole('button', { name: 'Get Early Access' }));
    await waitFor(() => expect(calls.map(([name]) => name)).toContain('sendThankYouEmail'));
    expect(await screen.findByRole('img', { name: 'Success' })).toBeInTheDocument();
  });
});

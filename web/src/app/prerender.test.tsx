// @vitest-environment node
/**
 * The build-time prerender of the landing page: its markup, and its critical CSS, which must hold a
 * rule for every Emotion class the markup uses (a class without its rule would paint unstyled until
 * the app loads, and then shift).
 */
import { describe, expect, it, vi } from 'vitest';
import { firebaseMock } from '@/test/firebaseMock';
import { EMOTION_KEY } from './emotionCache';
import { render } from './prerender';

vi.mock('@/lib/firebase', () => firebaseMock);

describe('render("/")', () => {
  const { html, head } = render('/');

  it('renders the landing page', () => {
    // After the Suspense marker of the routes.
    expect(html).toMatch(/^(<!--\$-->)?<header/);
    expect(html).toContain('id="hero-title">The safe, social way for teens to <span');
    expect(html.match(/type="email"/g)).toHaveLength(2);
  });

  it("returns only <style> elements for the head: Emotion's, with the shared key, and the islands' sheets", () => {
    const elements = head.match(/<style[^>]*>/g) ?? [];
    expect(elements.length).toBeGreaterThan(0);
    for (const element of elements) {
      expect(element).toMatch(
        new RegExp(`^<style (data-emotion="${EMOTION_KEY}(-global)? [^"]*"|data-goody-sheet="[a-z-]+")>$`),
      );
    }
    expect(head).toContain('<style data-goody-sheet="signup-form">');
    expect(head).toContain('<style data-goody-sheet="toast">');
    expect(head.replace(/<style[^>]*>[^<]*<\/style>/g, '')).toBe('');
  });

  it('has a rule for every Emotion class in the markup', () => {
    const classes = new Set(html.match(new RegExp(`\\b${EMOTION_KEY}-[a-z0-9]+\\b`, 'g')));
    // `-0` is the class of an empty style object: there is no rule to have.
    classes.delete(`${EMOTION_KEY}-0`);
    expect(classes.size).toBeGreaterThan(20);
    const missing = [...classes].filter((name) => !head.includes(`.${name}`));
    expect(missing).toEqual([]);
  });

  it("has a rule for every class of the islands' plain markup (the forms, the toast layer)", () => {
    const classes = new Set(html.match(/\bgoody-(signup|visually)[a-z_-]*/g));
    expect(classes.size).toBeGreaterThan(5);
    const missing = [...classes].filter((name) => !head.includes(`.${name}{`) && !head.includes(`.${name}[`));
    expect(missing).toEqual([]);
  });

  it('includes the global baseline (font stack, box sizing)', () => {
    expect(head).toMatch(new RegExp(`data-emotion="${EMOTION_KEY}-global `));
    expect(head).toContain('box-sizing:border-box');
    expect(head).toContain('font-family:system-ui');
  });
});

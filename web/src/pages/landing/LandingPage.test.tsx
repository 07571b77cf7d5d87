import { within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { firebaseMock } from '@/test/firebaseMock';
import { renderApp, screen } from '@/test/renderApp';

vi.mock('@/lib/firebase', () => firebaseMock);

const HERO = 'The safe, social way for teens to buy and sell style';
const region = (name: string | RegExp) => screen.getByRole('region', { name });
/** Text content with whitespace collapsed, for checks that span several elements. */
const textOf = (element: HTMLElement) => (element.textContent ?? '').replace(/\s+/g, ' ');

describe('landing page (/)', () => {
  it('shows the sections in the spec order: hero, benefits, finance tools, social proof, final call to action', () => {
    renderApp('/');
    const main = screen.getByRole('main');
    const names = within(main)
      .getAllByRole('region')
      .map((section) => section.getAttribute('aria-labelledby'))
      .map((id) => document.getElementById(id ?? '')?.textContent);
    expect(names).toEqual([
      HERO,
      'Built for teens. Trusted by parents.',
      'Learn money skills with every sale',
      'Teens and parents are already in',
      'Join the GOODY Club',
    ]);
    // The footer follows the main content.
    const footer = screen.getByRole('contentinfo');
    expect(main.compareDocumentPosition(footer) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it('has one h1, the hero title', () => {
    renderApp('/');
    expect(screen.getAllByRole('heading', { level: 1 }).map((h) => h.textContent)).toEqual([HERO]);
  });

  it('hero: sign-up form, "coming soon to iOS and Android", parent approval, and the phone mock-up with three sample items', () => {
    renderApp('/');
    const hero = region(HERO);
    expect(within(hero).getByRole('textbox', { name: 'Email address' })).toBeInTheDocument();
    expect(within(hero).getByRole('button', { name: 'Get Early Access' })).toBeInTheDocument();
    expect(within(hero).getByText('Coming soon to iOS and Android')).toBeInTheDocument();
    expect(within(hero).getByText('Parent approval required')).toBeInTheDocument();

    const mockup = within(hero).getByRole('figure', { name: 'Sample of the GOODY shopping feed' });
    const items = within(mockup).getAllByRole('listitem');
    expect(items).toHaveLength(3);
    const expected = [
      { price: '$25', rating: '4.9' },
      { price: '$18', rating: '4.8' },
      { price: '$35', rating: '5.0' },
    ];
    items.forEach((item, index) => {
      const { price, rating } = expected[index] ?? { price: '', rating: '' };
      expect(within(item).getByText(price)).toBeInTheDocument();
      expect(within(item).getByText(`Seller rated ${rating} out of 5`)).toBeInTheDocument();
      expect(within(item).getByText(/^@/)).toBeInTheDocument();
    });
  });

  it('benefits: every claim for teens and parents', () => {
    renderApp('/');
    const text = textOf(region('Built for teens. Trusted by parents.'));
    for (const claim of [
      'Teen payment options with parental controls',
      'A swipe-style social shopping feed',
      'Badges, style points and outfit challenges',
      'A community that has your back',
      'Security and trust',
      'Identity verification',
      'Secure payments',
      'Dispute resolution',
      'Reviews',
      'Parent approval is required for all accounts',
    ]) {
      expect(text).toContain(claim);
    }
  });

  it('finance tools: bonus coins, finance dashboard, closet value portfolio, and the sample dashboard $247, $89, $456', () => {
    renderApp('/');
    const finance = region('Learn money skills with every sale');
    expect(within(finance).getByText('Financial literacy tools')).toBeInTheDocument();
    for (const tool of ['Bonus coins', 'Finance dashboard', 'Closet value portfolio']) {
      expect(within(finance).getByRole('heading', { name: tool })).toBeInTheDocument();
    }
    const dashboard = within(finance).getByRole('figure', { name: 'My finance dashboard' });
    expect(
      within(dashboard)
        .getAllByRole('definition')
        .map((figure) => figure.textContent),
    ).toEqual(['$247', '$89', '$456']);
  });

  it('social proof: 200+ teens signed up, 95% excited, a survey of 500+ participants, 80% said exciting', () => {
    renderApp('/');
    const proof = region('Teens and parents are already in');
    const pairs = within(proof)
      .getAllByRole('term')
      .map((term) => `${term.nextElementSibling?.textContent} ${term.textContent}`);
    expect(pairs).toEqual([
      '200+ teens signed up',
      '95% excited for launch',
      '500+ survey participants',
      '80% said GOODY sounds exciting',
    ]);
  });

  it('final call to action: the second form, Join the Club', () => {
    renderApp('/');
    const join = region('Join the GOODY Club');
    expect(within(join).getByRole('textbox', { name: 'Email address' })).toBeInTheDocument();
    expect(within(join).getByRole('button', { name: 'Join the Club' })).toBeInTheDocument();
    expect(textOf(join)).toContain('Coming soon on iOS');
    expect(textOf(join)).toContain('Coming soon on Android');
    expect(screen.getAllByRole('textbox', { name: 'Email address' })).toHaveLength(2);
  });

  it('footer: two social profiles, a contact mail link, the four links without a target, copyright 2024', () => {
    renderApp('/');
    const footer = within(screen.getByRole('contentinfo'));

    expect(footer.getByRole('link', { name: 'GOODY on Instagram' })).toHaveAttribute(
      'href',
      'https://www.instagram.com/goodyapp/',
    );
    expect(footer.getByRole('link', { name: 'GOODY on TikTok' })).toHaveAttribute(
      'href',
      'https://www.tiktok.com/@goodyapp',
    );
    expect(footer.getByRole('link', { name: 'hello@goody.app' })).toHaveAttribute(
      'href',
      'mailto:hello@goody.app',
    );

    for (const name of ['Privacy Policy', 'Terms of Service', 'Parent Guide', 'Safety Center']) {
      const link = footer.getByRole('link', { name });
      expect(link).not.toHaveAttribute('href');
      expect(link).toHaveAttribute('aria-disabled', 'true');
      expect(link).toHaveAccessibleDescription('This page is coming soon.');
      // Reachable from the keyboard, so keyboard users find what mouse users see.
      link.focus();
      expect(link).toHaveFocus();
    }

    expect(footer.getByText(/© 2024 GOODY/)).toBeInTheDocument();
  });

  it('a skip link leads keyboard users past the header to the main content', () => {
    renderApp('/');
    const skip = screen.getByRole('link', { name: 'Skip to main content' });
    expect(skip).toHaveAttribute('href', '#main');
    expect(screen.getByRole('main')).toHaveAttribute('id', 'main');
  });

  it('the header "Join the Club" link jumps to the final form', () => {
    renderApp('/');
    const banner = within(screen.getByRole('banner'));
    expect(banner.getByRole('link', { name: 'Join the Club' })).toHaveAttribute('href', '#join');
    expect(document.getElementById('join')).toBe(region('Join the GOODY Club'));
  });

  it('loads no Firebase code just by rendering', () => {
    renderApp('/');
    expect(firebaseMock.connectionTest).not.toHaveBeenCalled();
    expect(firebaseMock.insertSubscription).not.toHaveBeenCalled();
  });
});

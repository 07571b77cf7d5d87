/**
 * A sign-up submitted before the app arrived, end to end in the page: the prerendered markup, the page's
 * real inline script (web/plugins/landing-bootstrap.ts) capturing the submit, then islands.tsx hydrating
 * and the form taking the captured submission over. It must run the spec's flow exactly once, with the
 * spec's toasts, and hydration must still find exactly the markup it rendered.
 */
import { act, fireEvent, waitFor, within } from '@testing-library/react';
import { FirebaseError } from 'firebase/app';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CAPTURE_GLOBAL, signupCapture } from '@/lib/signupCapture';
import { calls, failNext, firebaseMock } from '@/test/firebaseMock';
import { withPrerenderedPage } from '@/test/prerenderedPage';
import { expectToast } from '@/test/renderApp';
import { EMAIL, HERO_SIGNUP_CALLS, TOASTS } from '@/test/signupExpectations';
import { BOOTSTRAP_SCRIPT } from '../../plugins/landing-bootstrap';

vi.mock('@/lib/firebase', () => firebaseMock);

beforeAll(() => {
  // Vitest's jsdom runs page scripts with the DOM's own global while the test and the app see Node's
  // global as `window`; in a browser they are one object. Handing the page's global the app's capture
  // object makes them share it here too (the script keeps an object it finds).
  const probe = document.createElement('script');
  probe.textContent = 'document.documentElement.pageGlobal = self;';
  document.head.append(probe);
  const pageGlobal = (document.documentElement as unknown as { pageGlobal: Record<string, unknown> })
    .pageGlobal;
  pageGlobal[CAPTURE_GLOBAL] = signupCapture();
  // The page's own script, as the browser runs it: once per page, from an inline <script> element.
  const script = document.createElement('script');
  script.dataset.entry = '/assets/index-test.js';
  script.textContent = BOOTSTRAP_SCRIPT;
  document.head.append(script);
});

const page = withPrerenderedPage(() => {
  // A fresh page: nothing pending, no form live.
  const capture = signupCapture();
  capture.pending.length = 0;
  capture.live.length = 0;
});

function heroForm() {
  const region = within(page.container).getByRole('region', {
    name: 'The safe, social way for teens to buy and sell style',
  });
  const field = within(region).getByRole('textbox', { name: 'Email address' }) as HTMLInputElement;
  const button = within(region).getByRole('button', { name: 'Get Early Access' }) as HTMLButtonElement;
  const form = field.closest('form') as HTMLFormElement;
  // The browser fires `submit` only after its own validation passed; fireEvent skips that, as the tests do.
  const submit = () => fireEvent.submit(form);
  return { field, button, form, submit };
}

/** The visitor types and presses Enter before any app code has run. */
function submitBeforeTheApp(email = EMAIL) {
  const hero = heroForm();
  hero.field.value = email;
  hero.submit();
  return hero;
}

async function appArrives() {
  await act(async () => {
    await page.hydrate();
  });
}

describe('a sign-up captured before the app arrived', () => {
  it('is held, not sent: the form is busy and nothing has been called', () => {
    const { form, button, field } = submitBeforeTheApp();
    expect(form).toHaveAttribute('aria-busy', 'true');
    expect(button).toBeDisabled();
    expect(field).toHaveValue(EMAIL);
    expect(calls).toEqual([]);
    expect(signupCapture().pending).toEqual([{ source: 'hero_form', email: EMAIL }]);
  });

  it('runs the flow once after hydration: connection test, insert, contact, thank-you, success toast, field cleared', async () => {
    const { field } = submitBeforeTheApp();
    await appArrives();

    await expectToast(TOASTS.heroSuccess);
    expect(calls).toEqual(HERO_SIGNUP_CALLS);
    await waitFor(() => expect(field).toHaveValue(''));
    expect(signupCapture()).toEqual({
      pending: [],
      live: expect.arrayContaining(['hero_form', 'final_cta']),
    });
    // Hydration found the markup it rendered: the script's busy marks were undone first.
    expect(page.errors).toEqual([]);
  });

  it('a double press before the app stores once', async () => {
    const { submit, field } = submitBeforeTheApp();
    field.value = 'second@example.com';
    submit();
    submit();
    await appArrives();

    await expectToast(TOASTS.heroSuccess);
    expect(firebaseMock.insertSubscription).toHaveBeenCalledTimes(1);
    expect(calls[1]).toEqual(HERO_SIGNUP_CALLS[1]);
  });

  it('a captured sign-up that fails ends in the spec error toast and keeps the address', async () => {
    failNext('connectionTest', new FirebaseError('unavailable', 'offline'));
    const { field, button } = submitBeforeTheApp();
    await appArrives();

    await expectToast(TOASTS.connectionIssue);
    expect(calls).toEqual([['connectionTest']]);
    expect(field).toHaveValue(EMAIL);
    await waitFor(() => expect(button).toBeEnabled());
  });

  it('once the app has the form, a submit is the app’s alone: the script captures nothing more', async () => {
    const { field, button } = heroForm();
    await appArrives();
    await waitFor(() => expect(signupCapture().live).toContain('hero_form'));
    fireEvent.change(field, { target: { value: EMAIL } });
    fireEvent.click(button);

    await expectToast(TOASTS.heroSuccess);
    expect(firebaseMock.insertSubscription).toHaveBeenCalledTimes(1);
    expect(signupCapture().pending).toEqual([]);
  });

  it('an address typed before hydration but not submitted is the one the app sends', async () => {
    const { field, button } = heroForm();
    field.value = EMAIL;
    await appArrives();
    await waitFor(() => expect(signupCapture().live).toContain('hero_form'));
    fireEvent.click(button);

    await expectToast(TOASTS.heroSuccess);
    expect(calls[1]).toEqual(HERO_SIGNUP_CALLS[1]);
  });
});

import type { SignupSource } from '@goody/contract';
import { type FormEvent, useEffect, useEffectEvent, useRef, useState } from 'react';
import { signupForms } from '@/content/landing';
import { loadBackend, preloadBackendWhenIdle, prepareSignup, startingSignup } from '@/lib/backend';
import { CAPTURE_NOTICE_ATTRIBUTE, CAPTURE_SOURCE_ATTRIBUTE, takeOverSignupForm } from '@/lib/signupCapture';
import { useStyleSheet } from '@/lib/styleSheet';
import { useToast } from '@/lib/toast/toast';
import { runSignup } from './runSignup';
import { SIGNUP_FORM_CSS } from './signupFormStyles';
import { signupMessages } from './signupMessages';

/** The attribute of the element around each form, where the landing page hydrates it on its own. */
export const SIGNUP_ISLAND_ATTRIBUTE = 'data-signup-island';

export interface SignupFormProps {
  /** Which form this is; decides the subscription type, the payloads and the success toast. */
  source: SignupSource;
  label: string;
  placeholder: string;
  /** The button's words. */
  submit: string;
  /** A line under the field, read with it by screen readers. */
  hint?: string;
  /** `onDark` when the form sits on the dark gradient. */
  tone?: 'onLight' | 'onDark';
}

const logError = (message: string, details: Record<string, unknown>) => console.error(message, details);

/** The e-mail sign-up form; the hero and the final call to action both use it. */
export function SignupForm({
  source,
  label,
  placeholder,
  submit: submitLabel,
  hint,
  tone = 'onLight',
}: SignupFormProps) {
  const [email, setEmail] = useState('');
  // One fact: a sign-up of this form is in flight. It marks the form aria-busy and the button loading
  // (disabled). A submit is a discrete event, so React renders the disabled button before it handles the
  // next one: a double click or a second Enter finds `busy` set.
  const [busy, setBusy] = useState(false);
  const toast = useToast();
  const field = useRef<HTMLInputElement>(null);
  // Ids from the source, not useId: the form hydrates on its own root, where useId would differ from the
  // prerender's.
  const inputId = `${source}-email`;
  const hintId = `${source}-hint`;
  useStyleSheet('signup-form', SIGNUP_FORM_CSS);

  async function signUp(address: string) {
    startingSignup();
    setBusy(true);
    try {
      const outcome = await runSignup(address, source, { loadBackend, logError });
      toast(outcome.toast);
      if (outcome.ok) setEmail('');
    } finally {
      setBusy(false);
    }
  }

  // Once hydrated, the form is the app's: it takes over from the page's inline script and runs the
  // sign-up that script captured before the app came, if any, exactly once (web/src/lib/signupCapture.ts).
  const takeOver = useEffectEvent(() => {
    const { captured, release } = takeOverSignupForm(source);
    if (captured) {
      setEmail(captured.email);
      void signUp(captured.email);
    } else if (field.current?.value) {
      // Typed before hydration: React keeps the field's value when it hydrates, but not in its state.
      setEmail(field.current.value);
      prepareSignup(field.current.validity.valid);
    }
    return release;
  });
  useEffect(() => takeOver(), []);

  useEffect(() => preloadBackendWhenIdle(), []);

  function handleSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // Browsers block an invalid submit themselves; this keeps the rule where they do not (tests, old engines).
    if (busy || !event.currentTarget.checkValidity()) return;
    void signUp(email);
  }

  return (
    <form
      className="goody-signup"
      data-tone={tone}
      onSubmit={handleSubmit}
      aria-busy={busy}
      {...{ [CAPTURE_SOURCE_ATTRIBUTE]: source }}
    >
      <label className="goody-signup__label" htmlFor={inputId}>
        {label}
      </label>
      <div className="goody-signup__row">
        {/* No name: before the app has hydrated, the prerendered form would be submitted by the browser
            itself, and a named field would put the address in the URL (/?email=...), in the history and
            in server logs. Without one nothing is sent. Autofill goes by autocomplete="email". */}
        <input
          className="goody-signup__field"
          id={inputId}
          type="email"
          autoComplete="email"
          required
          spellCheck={false}
          placeholder={placeholder}
          value={email}
          ref={field}
          onChange={(event) => {
            setEmail(event.target.value);
            // An address is being typed: what the press will need (App Check's token, Firestore's preflight)
            // is fetched now.
            prepareSignup(event.target.validity.valid);
          }}
          aria-describedby={hint ? hintId : undefined}
        />
        <button className="goody-signup__button" type="submit" disabled={busy}>
          {busy ? <span className="goody-signup__spinner" aria-hidden="true" /> : null}
          {busy ? signupMessages.inFlight : submitLabel}
        </button>
      </div>
      {/* Says in words that the sign-up is on its way, for those who cannot see the button change. */}
      <p className="goody-visually-hidden" aria-live="polite">
        {busy ? signupMessages.inFlight : ''}
      </p>
      {/* Written by the page's inline script only, when the app could not be loaded in time: a live region
          that exists from the first paint, so the words are announced when they appear. */}
      <p className="goody-signup__notice" aria-live="polite" {...{ [CAPTURE_NOTICE_ATTRIBUTE]: '' }} />
      {hint ? (
        <p className="goody-signup__hint" id={hintId}>
          {hint}
        </p>
      ) : null}
    </form>
  );
}

/** One of the landing page's two forms, with its words from the page's content. */
export function LandingSignupForm({ source }: { source: SignupSource }) {
  return <SignupForm source={source} tone="onDark" {...signupForms[source]} />;
}

/** A landing-page form inside the element where the prerendered page hydrates it on its own (app/islands.tsx). */
export function SignupIsland({ source }: { source: SignupSource }) {
  return (
    <div {...{ [SIGNUP_ISLAND_ATTRIBUTE]: source }} style={{ width: '100%', maxWidth: 520 }}>
      <LandingSignupForm source={source} />
    </div>
  );
}

import type { SignupSource } from '@goody/contract';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import OutlinedInput from '@mui/material/OutlinedInput';
import { type FormEvent, useEffect, useEffectEvent, useId, useRef, useState } from 'react';
import { loadBackend, preloadBackendWhenIdle } from '@/lib/backend';
import { CAPTURE_NOTICE_ATTRIBUTE, CAPTURE_SOURCE_ATTRIBUTE, takeOverSignupForm } from '@/lib/signupCapture';
import { useToast } from '@/lib/toast/ToastProvider';
import { colors } from '@/theme/tokens';
import { runSignup } from './runSignup';
import { signupMessages } from './signupMessages';

export interface SignupFormProps {
  /** Which form this is; decides the subscription type, the payloads and the success toast. */
  source: SignupSource;
  label: string;
  placeholder: string;
  submitLabel: string;
  /** A line under the field, read with it by screen readers. */
  hint?: string;
  /** `onDark` when the form sits on the dark gradient. */
  tone?: 'onLight' | 'onDark';
}

const logError = (message: string, details: Record<string, unknown>) => console.error(message, details);

/** Read by screen readers, not shown (the button shows the same words). */
const VISUALLY_HIDDEN = {
  position: 'absolute',
  width: 1,
  height: 1,
  m: -0.125,
  p: 0,
  overflow: 'hidden',
  clip: 'rect(0 0 0 0)',
  whiteSpace: 'nowrap',
  border: 0,
} as const;

/** The e-mail sign-up form; the hero and the final call to action both use it. */
export function SignupForm({
  source,
  label,
  placeholder,
  submitLabel,
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
  const inputId = useId();
  const hintId = useId();

  async function signUp(address: string) {
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

  const onDark = tone === 'onDark';
  return (
    <Box
      component="form"
      onSubmit={handleSubmit}
      aria-busy={busy}
      {...{ [CAPTURE_SOURCE_ATTRIBUTE]: source }}
      sx={{ width: '100%', maxWidth: 520 }}
    >
      <Box
        component="label"
        htmlFor={inputId}
        sx={{
          display: 'block',
          mb: 1,
          fontWeight: 700,
          color: onDark ? colors.onNight : colors.ink,
        }}
      >
        {label}
      </Box>
      <Box sx={{ display: 'flex', flexDirection: { xs: 'column', sm: 'row' }, gap: 1.5 }}>
        {/* No name: before the app has hydrated, the prerendered form would be submitted by the browser
            itself, and a named field would put the address in the URL (/?email=...), in the history and
            in server logs. Without one nothing is sent. Autofill goes by autocomplete="email". */}
        <OutlinedInput
          id={inputId}
          type="email"
          autoComplete="email"
          required
          fullWidth
          placeholder={placeholder}
          value={email}
          inputRef={field}
          onChange={(event) => setEmail(event.target.value)}
          slotProps={{ input: { 'aria-describedby': hint ? hintId : undefined, spellCheck: false } }}
          sx={{ flex: 1 }}
        />
        <Button
          type="submit"
          variant="contained"
          color={onDark ? 'secondary' : 'primary'}
          size="large"
          loading={busy}
          loadingPosition="start"
          sx={{ flexShrink: 0, whiteSpace: 'nowrap' }}
        >
          {busy ? signupMessages.inFlight : submitLabel}
        </Button>
      </Box>
      {/* Says in words that the sign-up is on its way, for those who cannot see the button change. */}
      <Box component="p" aria-live="polite" sx={VISUALLY_HIDDEN}>
        {busy ? signupMessages.inFlight : ''}
      </Box>
      {/* Written by the page's inline script only, when the app could not be loaded in time: a live region
          that exists from the first paint, so the words are announced when they appear. */}
      <Box
        component="p"
        aria-live="polite"
        {...{ [CAPTURE_NOTICE_ATTRIBUTE]: '' }}
        sx={{
          m: 0,
          mt: 1.25,
          fontWeight: 700,
          color: onDark ? colors.onNight : colors.ink,
          '&:empty': { mt: 0 },
        }}
      />
      {hint ? (
        <Box
          component="p"
          id={hintId}
          sx={{ m: 0, mt: 1.25, fontSize: '0.875rem', color: onDark ? colors.onNightMuted : colors.inkMuted }}
        >
          {hint}
        </Box>
      ) : null}
    </Box>
  );
}

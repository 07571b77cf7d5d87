import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import OutlinedInput from '@mui/material/OutlinedInput';
import { type FormEvent, useEffect, useId, useReducer, useRef, useState } from 'react';
import { loadBackend, preloadBackendWhenIdle } from '@/lib/backend';
import type { SubscriptionSource } from '@/lib/subscriptions';
import { useToast } from '@/lib/toast/ToastProvider';
import { colors } from '@/theme/tokens';
import { runSignup } from './runSignup';
import { isSignupInFlight, signupReducer } from './signupMachine';

export interface SignupFormProps {
  /** Which form this is; decides the subscription type, the payloads and the success toast. */
  source: SubscriptionSource;
  label: string;
  placeholder: string;
  submitLabel: string;
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
  submitLabel,
  hint,
  tone = 'onLight',
}: SignupFormProps) {
  const [email, setEmail] = useState('');
  const [state, send] = useReducer(signupReducer, 'idle');
  // The disabled button stops a second click once React re-renders; this stops one that lands first.
  const submitting = useRef(false);
  const toast = useToast();
  const inputId = useId();
  const hintId = useId();
  const inFlight = isSignupInFlight(state);

  useEffect(() => preloadBackendWhenIdle(), []);

  async function handleSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // Browsers block an invalid submit themselves; this keeps the rule where they do not (tests, old engines).
    if (submitting.current || !event.currentTarget.checkValidity()) return;
    submitting.current = true;
    try {
      const outcome = await runSignup(email, source, { loadBackend, send, logError });
      toast(outcome.toast);
      if (outcome.ok) setEmail('');
    } finally {
      submitting.current = false;
    }
  }

  const onDark = tone === 'onDark';
  return (
    <Box component="form" onSubmit={handleSubmit} aria-busy={inFlight} sx={{ width: '100%', maxWidth: 520 }}>
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
          onChange={(event) => setEmail(event.target.value)}
          slotProps={{ input: { 'aria-describedby': hint ? hintId : undefined, spellCheck: false } }}
          sx={{ flex: 1 }}
        />
        <Button
          type="submit"
          variant="contained"
          color={onDark ? 'secondary' : 'primary'}
          size="large"
          loading={inFlight}
          sx={{ flexShrink: 0, whiteSpace: 'nowrap' }}
        >
          {submitLabel}
        </Button>
      </Box>
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

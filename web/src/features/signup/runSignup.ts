import { addContactRequest, CALLABLES, type SignupSource, subscriptionTypeOf } from '@goody/contract';
import type { Backend } from '@/lib/backend';
import type { ToastMessage } from '@/lib/toast/toast';
import { signupMessages } from './signupMessages';

export interface SignupOutcome {
  ok: boolean;
  toast: ToastMessage;
}

export interface SignupDependencies {
  loadBackend: () => Promise<Backend>;
  /** Where non-fatal failures are reported; never given the e-mail address. */
  logError: (message: string, details: Record<string, unknown>) => void;
}

/** A database message worth showing the visitor, or undefined. */
function messageOf(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'message' in error) {
    const { message } = error as { message: unknown };
    if (typeof message === 'string' && message.trim()) return message.trim();
  }
  return undefined;
}

/** The code and message of a failure, with the address itself masked: addresses are of minors. */
function describeFailure(error: unknown, email: string): Record<string, unknown> {
  const code =
    typeof error === 'object' && error !== null && 'code' in error
      ? (error as { code: unknown }).code
      : undefined;
  const message = messageOf(error)?.split(email).join('[email]');
  return { code, message };
}

const errorToast = (title: string, description: string): SignupOutcome => ({
  ok: false,
  toast: { variant: 'error', title, description },
});

/**
 * One sign-up, in the order docs/product.md gives (One sign-up, step by step): connection test -> insert -> add contact -> thank-you mail.
 * Resolves to the toast to show; it never rejects.
 */
export async function runSignup(
  email: string,
  source: SignupSource,
  { loadBackend, logError }: SignupDependencies,
): Promise<SignupOutcome> {
  try {
    const backend = await loadBackend();

    try {
      await backend.connectionTest();
    } catch {
      return errorToast(signupMessages.connectionIssue.title, signupMessages.connectionIssue.description);
    }

    try {
      await backend.insertSubscription({
        email,
        subscription_type: subscriptionTypeOf(source),
        source,
      });
    } catch (error) {
      return errorToast(
        signupMessages.databaseError.title,
        messageOf(error) ?? signupMessages.databaseError.fallbackDescription,
      );
    }

    try {
      await backend.addContactToMailerlite(addContactRequest(email, source));
    } catch (error) {
      logError(`${CALLABLES.addContact} failed; the sign-up itself is saved`, describeFailure(error, email));
    }

    try {
      await backend.sendThankYouEmail({ email });
    } catch (error) {
      logError(
        `${CALLABLES.sendThankYou} failed; the sign-up itself is saved`,
        describeFailure(error, email),
      );
    }

    return {
      ok: true,
      toast: {
        variant: 'success',
        title: signupMessages.success.titleBySource[source],
        description: signupMessages.success.description,
      },
    };
  } catch (error) {
    logError('sign-up failed unexpectedly', describeFailure(error, email));
    return errorToast(signupMessages.networkError.title, signupMessages.networkError.description);
  }
}

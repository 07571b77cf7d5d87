import type { Backend } from '@/lib/backend';

/**
 * A whole hero-form sign-up of teen@example.com through the Firebase boundary, call by call as the form makes
 * it: the connection test, the insert, then the two callables.
 */
export async function signUpThrough(backend: Backend): Promise<void> {
  const email = 'teen@example.com';
  await backend.connectionTest();
  await backend.insertSubscription({ email, subscription_type: 'updates', source: 'hero_form' });
  await backend.addContactToMailerlite({ email, source: 'hero_form' });
  await backend.sendThankYouEmail({ email });
}

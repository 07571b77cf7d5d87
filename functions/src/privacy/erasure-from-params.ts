import { systemClock } from '../clock';
import { adminFirestore } from '../firestore';
import { cloudLogger } from '../logs';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import type { EraseDeps } from './erasure';
import { mailboxesFromParams } from './mailboxes';
import type { FinishErasureLater } from './suppression';

/**
 * What an erasure needs in a deployed function (the click, its finish task, the half-hourly job), from the
 * params: MailerLite with 10 s a request, the database, the suppression list's keys (with `finishErasureLater`
 * where the erasure may be left pending: the click), and a deadline `budgetMs` from now for the whole of it.
 * Read at call time, never at load time.
 */
export async function erasureDepsFromParams(
  budgetMs: number,
  finishErasureLater?: FinishErasureLater,
): Promise<EraseDeps> {
  const { client } = mailerLiteFromParams({ timeoutMs: 10_000 });
  const deadline = Date.now() + budgetMs;
  const db = await adminFirestore();
  return {
    db,
    client,
    clock: systemClock,
    logger: cloudLogger,
    mailboxes: mailboxesFromParams(db, finishErasureLater),
    request: { deadline },
    deadline,
  };
}

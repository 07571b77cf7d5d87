import { systemClock } from '../clock';
import { adminFirestore } from '../firestore';
import { cloudLogger } from '../logs';
import { mailerLiteFromParams } from '../mailerlite/from-params';
import type { EraseDeps } from './erasure';
import { mailboxesFromParams } from './mailboxes';
import type { FinishErasureLater } from './suppression';

/** An erasure's deps in a deployed function, read from the params at call time, due `budgetMs` from now. */
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

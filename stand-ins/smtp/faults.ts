import { z } from 'zod';
import { parseWith, take } from '../http.ts';

/**
 * A refusal of `stage` with `code` and `message`: at 'data' (the default) the message, as a provider refuses one
 * it will not relay; at 'mail' the sender (a domain not verified yet); at 'rcpt' every recipient, or only
 * `recipient` (in any case) when it is given: one mailbox that does not exist.
 */
const refusal = z.strictObject({
  code: z.number().int().min(400).max(599),
  message: z.string().optional(),
  stage: z.enum(['mail', 'rcpt', 'data']).default('data'),
  recipient: z.string().min(1).optional(),
});
const rcptOnly = [
  (rule: { stage: string; recipient?: string }) => rule.recipient === undefined || rule.stage === 'rcpt',
  { message: 'recipient applies at the rcpt stage only' },
] as const;
const refusalRule = refusal.refine(...rcptOnly);
/** Refuse the next `count` commands that match (at 'data' the next `count` messages), then accept again. */
const rejectRule = refusal.extend({ count: z.number().int().min(1).default(1) }).refine(...rcptOnly);

/**
 * The body of PUT /__control/faults: `rejectNext` adds rules used up one command at a time; `refuse` replaces
 * the standing refusals, which hold until a later PUT replaces them (`refuse: []` ends them), as a relay refuses
 * a misconfigured sender until an operator fixes it; `down` switches the SMTP listener.
 */
const faultsBody = z.strictObject({
  rejectNext: z.union([rejectRule, z.array(rejectRule)]).optional(),
  refuse: z.union([refusalRule, z.array(refusalRule)]).optional(),
  down: z.boolean().optional(),
});

/** The SMTP command at which a rejection is answered. */
export type SmtpStage = z.infer<typeof rejectRule>['stage'];
export type RejectRule = Omit<Required<z.infer<typeof rejectRule>>, 'recipient'> & { recipient?: string };
/** A standing refusal (`refuse`): as a rule, without a count. */
export type Refusal = Omit<RejectRule, 'count'>;

const DEFAULT_MESSAGES: Record<number, string> = {
  421: '4.3.2 Service not available, closing transmission channel',
  450: '4.2.0 Mailbox unavailable, try again later',
  451: '4.3.0 Temporary failure, try again later',
  452: '4.3.1 Insufficient system storage',
  550: '5.1.1 Mailbox unavailable',
  552: '5.3.4 Message too big',
  553: '5.1.3 Mailbox name not allowed',
  554: '5.7.1 Message rejected',
};

const withMessage = <T extends { code: number; message?: string }>(rule: T) => ({
  ...rule,
  message: rule.message ?? DEFAULT_MESSAGES[rule.code] ?? 'Rejected',
});

export class SmtpFaults {
  private rules: RejectRule[] = [];
  private standing: Refusal[] = [];
  private isDown = false;

  /** `setListening` stops or resumes accepting SMTP connections on the same port. */
  constructor(private readonly setListening: (listening: boolean) => Promise<void>) {}

  /** `recipient`: at 'rcpt' only, the rule refuses that recipient and lets the others by. */
  rejectNext(
    count: number,
    code: number,
    message?: string,
    stage: SmtpStage = 'data',
    recipient?: string,
  ): void {
    this.rules.push(withMessage(parseWith(rejectRule, { count, code, stage, message, recipient })));
  }

  /** Replaces the standing refusals: each refuses every matching command until the next call (`[]`: none). */
  refuse(refusals: readonly Partial<Refusal>[]): void {
    this.standing = refusals.map((r) => withMessage(parseWith(refusalRule, r)));
  }

  get down(): boolean {
    return this.isDown;
  }

  /** While down the SMTP port refuses connections (ECONNREFUSED), as a stopped mail server does. */
  async setDown(down: boolean): Promise<void> {
    if (down === this.isDown) return;
    await this.setListening(!down);
    this.isDown = down;
  }

  async clear(): Promise<void> {
    this.rules = [];
    this.standing = [];
    await this.setDown(false);
  }

  /**
   * The refusal of this command, if any: one use of the first rule for this stage (and, at 'rcpt', this
   * recipient), consumed; else the first standing refusal that matches.
   */
  take(stage: SmtpStage, recipient?: string): Refusal | undefined {
    const matches = (r: Refusal) =>
      r.stage === stage &&
      (r.recipient === undefined || r.recipient.toLowerCase() === recipient?.toLowerCase());
    return take(this.rules, matches) ?? this.standing.find(matches);
  }

  state() {
    return {
      rejectNext: this.rules.map((r) => ({ ...r })),
      refuse: this.standing.map((r) => ({ ...r })),
      down: this.isDown,
    };
  }

  /** Applies the JSON of PUT /__control/faults; a malformed body throws and changes nothing. */
  async apply(json: unknown): Promise<void> {
    const { rejectNext, refuse, down } = parseWith(faultsBody, json);
    for (const r of [rejectNext ?? []].flat())
      this.rejectNext(r.count, r.code, r.message, r.stage, r.recipient);
    if (refuse !== undefined) this.refuse([refuse].flat());
    if (down !== undefined) await this.setDown(down);
  }
}

export function smtpError(rule: { code: number; message: string }): Error & { responseCode: number } {
  return Object.assign(new Error(rule.message), { responseCode: rule.code });
}

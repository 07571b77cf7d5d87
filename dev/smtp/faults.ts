import { z } from 'zod';
import { parseWith } from '../http.ts';

/**
 * Refuse the next `count` commands of `stage` with `code` and `message`. At 'data' (the default) that is the
 * next `count` messages, refused after their content was received, as a provider refuses a message it will not
 * relay; at 'rcpt' it is the next `count` recipients.
 */
const rejectRule = z.strictObject({
  count: z.number().int().min(1).default(1),
  code: z.number().int().min(400).max(599),
  message: z.string().optional(),
  stage: z.enum(['mail', 'rcpt', 'data']).default('data'),
});

/** The body of PUT /__control/faults: `rejectNext` adds rules, `down` switches the SMTP listener. */
const faultsBody = z.strictObject({
  rejectNext: z.union([rejectRule, z.array(rejectRule)]).optional(),
  down: z.boolean().optional(),
});

/** The SMTP command at which a rejection is answered. */
export type SmtpStage = z.infer<typeof rejectRule>['stage'];
export type RejectRule = Required<z.infer<typeof rejectRule>>;

export type SmtpFaultsSnapshot = ReturnType<SmtpFaults['state']>;

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

export class SmtpFaults {
  private rules: RejectRule[] = [];
  private isDown = false;

  /** `setListening` stops or resumes accepting SMTP connections on the same port. */
  constructor(private readonly setListening: (listening: boolean) => Promise<void>) {}

  rejectNext(count: number, code: number, message?: string, stage: SmtpStage = 'data'): void {
    const rule = parseWith(rejectRule, { count, code, stage, ...(message === undefined ? {} : { message }) });
    this.rules.push({ ...rule, message: rule.message ?? DEFAULT_MESSAGES[rule.code] ?? 'Rejected' });
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
    await this.setDown(false);
  }

  /** Consumes one use of the first rule for this stage, if any. */
  take(stage: SmtpStage): RejectRule | undefined {
    const rule = this.rules.find((r) => r.stage === stage);
    if (!rule) return undefined;
    rule.count -= 1;
    if (rule.count === 0) this.rules.splice(this.rules.indexOf(rule), 1);
    return rule;
  }

  state() {
    return { rejectNext: this.rules.map((r) => ({ ...r })), down: this.isDown };
  }

  /** Applies the JSON of PUT /__control/faults; a malformed body throws and changes nothing. */
  async apply(json: unknown): Promise<void> {
    const { rejectNext, down } = parseWith(faultsBody, json);
    for (const r of [rejectNext ?? []].flat()) this.rejectNext(r.count, r.code, r.message, r.stage);
    if (down !== undefined) await this.setDown(down);
  }
}

export function smtpError(rule: RejectRule): Error & { responseCode: number } {
  return Object.assign(new Error(rule.message), { responseCode: rule.code });
}

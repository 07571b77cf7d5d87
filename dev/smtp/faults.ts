/** The SMTP command at which a rejection is answered. */
export type SmtpStage = 'mail' | 'rcpt' | 'data';

/**
 * Refuse the next `count` commands of `stage` with `code` and `message`. At 'data' (the default) that is the
 * next `count` messages, refused after their content was received, as a provider refuses a message it will not
 * relay; at 'rcpt' it is the next `count` recipients.
 */
export interface RejectRule {
  count: number;
  code: number;
  message: string;
  stage: SmtpStage;
}

export interface SmtpFaultsSnapshot {
  rejectNext: RejectRule[];
  down: boolean;
}

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
    if (!Number.isInteger(count) || count < 1)
      throw new TypeError('rejectNext count must be a positive integer');
    if (!Number.isInteger(code) || code < 400 || code > 599) {
      throw new TypeError('rejectNext code must be an SMTP reply code from 400 to 599');
    }
    if (!['mail', 'rcpt', 'data'].includes(stage))
      throw new TypeError("stage must be 'mail', 'rcpt' or 'data'");
    this.rules.push({ count, code, message: message ?? DEFAULT_MESSAGES[code] ?? 'Rejected', stage });
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

  snapshot(): SmtpFaultsSnapshot {
    return { rejectNext: this.rules.map((r) => ({ ...r })), down: this.isDown };
  }

  /**
   * Applies the JSON of PUT /__control/faults: `rejectNext` ({count, code, message?, stage?} or a list) adds rules,
   * `down` switches the SMTP listener. Throws TypeError on a malformed body, before changing anything.
   */
  async applyJson(json: unknown): Promise<void> {
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw new TypeError('faults body must be a JSON object');
    }
    const { rejectNext, down } = json as Record<string, unknown>;
    const list = rejectNext === undefined ? [] : Array.isArray(rejectNext) ? rejectNext : [rejectNext];
    if (down !== undefined && typeof down !== 'boolean') throw new TypeError('down must be a boolean');
    const parsed = list.map((item: unknown) => {
      if (typeof item !== 'object' || item === null) throw new TypeError('rejectNext must be an object');
      const { count = 1, code, message, stage = 'data' } = item as Record<string, unknown>;
      if (typeof count !== 'number' || typeof code !== 'number') {
        throw new TypeError('rejectNext needs a numeric code (and count)');
      }
      if (message !== undefined && typeof message !== 'string')
        throw new TypeError('message must be a string');
      if (stage !== 'mail' && stage !== 'rcpt' && stage !== 'data') {
        throw new TypeError("stage must be 'mail', 'rcpt' or 'data'");
      }
      // Checks the values the same way rejectNext will, on a throwaway instance, so nothing half-applies.
      new SmtpFaults(async () => {}).rejectNext(count, code, message, stage);
      return { count, code, message, stage } as const;
    });
    for (const rule of parsed) this.rejectNext(rule.count, rule.code, rule.message, rule.stage);
    if (down !== undefined) await this.setDown(down);
  }
}

export function smtpError(rule: RejectRule): Error & { responseCode: number } {
  return Object.assign(new Error(rule.message), { responseCode: rule.code });
}

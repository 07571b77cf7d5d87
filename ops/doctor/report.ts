// What every check of the launch check answers, and how the answers are printed.

/** `cannot tell` never fails the run: it says what could not be read, and why. */
export type Outcome = 'pass' | 'fail' | 'cannot tell';

export interface CheckResult {
  /** What was checked, e.g. "sending domain: SPF". */
  name: string;
  outcome: Outcome;
  /** What was found, on one line. Never an address of a sign-up, never a secret. */
  detail: string;
  /** For a fail: the one thing to do about it. For cannot tell: how to make it tellable, if anything. */
  fix?: string;
  /** Further lines printed under the check (the delivery summary's table). */
  lines?: string[];
}

export const pass = (name: string, detail: string, lines?: string[]): CheckResult => ({
  name,
  outcome: 'pass',
  detail,
  ...(lines ? { lines } : {}),
});
export const fail = (name: string, detail: string, fix: string): CheckResult => ({
  name,
  outcome: 'fail',
  detail,
  fix,
});
export const cannotTell = (name: string, detail: string, fix?: string): CheckResult => ({
  name,
  outcome: 'cannot tell',
  detail,
  ...(fix ? { fix } : {}),
});

const LABEL: Record<Outcome, string> = { pass: 'pass', fail: 'FAIL', 'cannot tell': 'cannot tell' };

export function formatResult(result: CheckResult): string {
  const lines = [`${LABEL[result.outcome].padEnd(11)}  ${result.name}: ${result.detail}`];
  for (const line of result.lines ?? []) lines.push(`             ${line}`);
  if (result.fix) lines.push(`             fix: ${result.fix}`);
  return lines.join('\n');
}

export function formatSummary(results: CheckResult[]): string {
  const count = (outcome: Outcome) => results.filter((result) => result.outcome === outcome).length;
  return `doctor: ${count('pass')} passed, ${count('fail')} failed, ${count('cannot tell')} cannot tell`;
}

/** The results as one JSON document (--json): each check, the counts and the exit code. */
export function formatJson(
  results: CheckResult[],
  about: { project: string | null; source: string },
): string {
  const count = (outcome: Outcome) => results.filter((result) => result.outcome === outcome).length;
  return JSON.stringify(
    {
      ...about,
      summary: { pass: count('pass'), fail: count('fail'), cannotTell: count('cannot tell') },
      exitCode: exitCode(results),
      checks: results,
    },
    null,
    2,
  );
}

/** The exit code: non-zero when any check failed; `cannot tell` does not fail the run. */
export function exitCode(results: CheckResult[]): number {
  return results.some((result) => result.outcome === 'fail') ? 1 : 0;
}

/** An error's message for a detail line, without anything after the first line. */
export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]?.trim() || 'unknown error';
}

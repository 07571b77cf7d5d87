// No secret in any output. The launch check is given SMTP_URLs whose passwords hold / + # @ = : % ? unencoded, or
// whose port is malformed: every check's printed line (and --json) holds no part of the password. Run in this
// process for each password, and as the operator runs it (npm run doctor: a child process, so Node's own
// warnings are caught too) for a few, in the local mode with no stack and the secrets from the environment, so
// nothing leaves this machine.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PASSWORDS, passwordPieces } from '../../functions/test-support/relay-passwords.ts';
import { runDoctor } from './doctor.ts';
import { formatJson, formatResult } from './report.ts';
import { localSetup } from './setup.ts';

const repoRoot = path.resolve(import.meta.dirname, '..', '..');
/** The environment of a run: a page port no stack uses (no stack's settings are read), the secrets given. */
const env = (smtpUrl: string) => ({
  GOODY_HOSTING_PORT: '1',
  SMTP_URL: smtpUrl,
  UNSUBSCRIBE_SECRET: 'x'.repeat(40),
});
const urlOf = (password: string, port = '1') => `smtps://AKIAEXAMPLE:${password}@127.0.0.1:${port}`;

function expectNoPart(output: string, password: string) {
  expect(output).toContain('SMTP relay');
  for (const piece of passwordPieces(password)) expect(output, piece).not.toContain(piece);
}

function doctor(smtpUrl: string, args: string[] = []) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'ops', 'doctor', 'doctor.ts'), ...args],
      { cwd: repoRoot, timeout: 90_000, env: { ...process.env, ...env(smtpUrl) } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the launch check with a relay password in SMTP_URL', () => {
  it('prints no part of it in any check, whatever the password holds, and says to percent-encode it', async () => {
    const cases = [...PASSWORDS.map((password) => [password, '1']), [PASSWORDS[0] ?? '', '4x65']];
    for (const [password = '', port] of cases) {
      const setup = localSetup(repoRoot, env(urlOf(password, port)));
      const lines: string[] = [];
      const results = await runDoctor({
        repoRoot,
        setup,
        resolver: null,
        firestore: null,
        report: (result) => lines.push(formatResult(result)),
      });
      expectNoPart(
        [setup.source, ...lines, formatJson(results, { project: null, source: setup.source })].join('\n'),
        password,
      );
      const relay = results.find((result) => result.name.startsWith('SMTP relay'));
      expect(relay?.outcome, password).toBe('fail');
    }
  });

  it('nor does npm run doctor print any, Node included, in text or --json', async () => {
    const runs = await Promise.all([
      doctor(urlOf(PASSWORDS[0] ?? '')),
      doctor(urlOf(PASSWORDS[6] ?? ''), ['--json']),
      doctor(urlOf(PASSWORDS[3] ?? '', '46x5')),
    ]);
    for (const [index, password] of [PASSWORDS[0], PASSWORDS[6], PASSWORDS[3]].entries()) {
      const run = runs[index];
      const output = `${run?.stdout}\n${run?.stderr}`;
      expectNoPart(output, password ?? '');
      expect(output).not.toMatch(/DeprecationWarning|DEP0/);
      expect(output).toContain('percent-encode the user and the password');
      expect(run?.code).toBe(1);
    }
    // --json: stdout is the one document.
    expect(JSON.parse(runs[1]?.stdout ?? '')).toMatchObject({
      exitCode: 1,
      summary: { fail: expect.any(Number) },
    });
  }, 180_000);
});

// firestore.rules read as text, for what ties it to the rest of the code: the form/list pairs of the contract,
// the grants it makes, and the e-mail pattern evaluated as RE2 would. How the rules behave is proven on the
// Firebase Firestore emulator by tests/rules/ (part of every `npm test`).
import { readFileSync } from 'node:fs';
import {
  COLLECTIONS,
  EMAIL_MAX_LENGTH,
  HEALTH_DOCUMENT,
  LOCAL_PART_MAX_LENGTH,
  SIGNUP_FORMS,
  SOURCES,
} from '@goody/contract';
import { describe, expect, it } from 'vitest';
import { emailGrammarTable } from '../rules/email-cases.ts';

const rules = readFileSync(new URL('../../firestore.rules', import.meta.url), 'utf8');

// String literals may hold braces (the e-mail pattern does); blank them before counting blocks.
function withoutStrings(line: string): string {
  return line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""');
}

interface Grant {
  path: string;
  methods: string;
  condition: string;
}

/** Every allow statement with the full match path it sits under. */
function grants(source: string): Grant[] {
  const found: Grant[] = [];
  const stack: Array<{ path: string | null; depth: number }> = [];
  let depth = 0;
  const lines = source.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = withoutStrings(lines[i] ?? '').replace(/\/\/.*$/, '');
    const match = /^\s*match\s+(\S+)\s*\{/.exec(line);
    if (match?.[1]) stack.push({ path: match[1], depth });
    const allow = /^\s*allow\s+([a-z, ]+?)\s*:\s*if\s+(.+?);?\s*$/.exec(line);
    if (allow?.[1] && allow[2]) {
      const path = stack.map((entry) => entry.path).join('');
      found.push({ path, methods: allow[1].replace(/\s+/g, ''), condition: allow[2] });
    }
    depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
    while (stack.length > 0 && depth <= (stack.at(-1)?.depth ?? -1)) stack.pop();
  }
  return found;
}

/** The (subscription_type, source) pairs isKnownSignupPair lets in, read from its body. */
function rulePairs(source: string): Array<[string, string]> {
  const body =
    /function isKnownSignupPair\(subscriptionType, signupSource\) \{([^}]*)\}/.exec(source)?.[1] ?? '';
  return [...body.matchAll(/\(subscriptionType == '([^']*)' && signupSource == '([^']*)'\)/g)].map(
    (match): [string, string] => [match[1] ?? '', match[2] ?? ''],
  );
}

describe('firestore.rules, read offline', () => {
  it("lets in exactly the contract's form/list pairs (contract/src/index.ts), and nothing else", () => {
    const body = /function isKnownSignupPair\(subscriptionType, signupSource\) \{([^}]*)\}/.exec(rules)?.[1];
    expect(body, 'isKnownSignupPair in firestore.rules').toBeDefined();
    const pairs = rulePairs(rules);
    const contract = SOURCES.map((source) => [SIGNUP_FORMS[source].subscription_type, source]);
    expect(pairs.sort()).toEqual(contract.sort());
    // Nothing but those pairs joined by ||: no clause the pattern above would miss.
    const clauses = (body ?? '')
      .replace(/^\s*return\s*/, '')
      .replace(/;\s*$/, '')
      .split('||');
    expect(clauses.map((clause) => clause.trim())).toHaveLength(pairs.length);
    expect(body).toMatch(
      /^\s*return\s+(\(subscriptionType == '[^']*' && signupSource == '[^']*'\)\s*(\|\|\s*)?)+;\s*$/,
    );
  });

  it('starts with rules_version 2 (collection-group and recursive-wildcard semantics depend on it)', () => {
    expect(rules.split('\n').find((line) => line.trim() && !line.trim().startsWith('//'))).toBe(
      "rules_version = '2';",
    );
  });

  it('grants exactly three things: create a sign-up, get the health document, and nothing anywhere else', () => {
    expect(grants(rules)).toEqual([
      {
        path: `/databases/{database}/documents/${COLLECTIONS.signups}/{subscriptionId}`,
        methods: 'create',
        condition: 'isPageDocumentId(subscriptionId) && isValidSignup(request.resource.data)',
      },
      {
        path: `/databases/{database}/documents/${HEALTH_DOCUMENT.collection}/${HEALTH_DOCUMENT.id}`,
        methods: 'get',
        condition: 'true',
      },
      { path: '/databases/{database}/documents/{document=**}', methods: 'read,write', condition: 'false' },
    ]);
  });

  it('puts a plain-English comment line right above every match block', () => {
    const lines = rules.split('\n');
    const uncommented = lines
      .map((line, index) => ({ line, above: lines[index - 1] ?? '' }))
      .filter(({ line }) => /^\s*match\s/.test(line))
      .filter(({ above }) => !/^\s*\/\/ \S/.test(above))
      .map(({ line }) => line.trim());
    expect(uncommented).toEqual([]);
  });

  it('checks the four sign-up fields by key, both ways (no field missing, none extra)', () => {
    const fields = "['email', 'subscription_type', 'source', 'created_at']";
    expect(rules).toContain(`signup.keys().hasOnly(${fields})`);
    expect(rules).toContain(`signup.keys().hasAll(${fields})`);
  });
});

describe('the address checks of firestore.rules, evaluated as RE2 evaluates String.matches()', () => {
  const body = /function isEmailAddress\(email\) \{([\s\S]*?)\n\s*\}/.exec(rules)?.[1] ?? '';
  // String.matches() is a full match: anchor each pattern at both ends, as RE2::FullMatch does.
  const patterns = [...body.matchAll(/(!?)email\.matches\("([^"]+)"\)/g)].map((match) => ({
    negated: match[1] === '!',
    source: match[2] ?? '',
    regex: new RegExp(`^(?:${match[2]})$`),
  }));
  const maxLength = Number(/email\.size\(\) <= (\d+)/.exec(body)?.[1]);
  const maxLocal = Number(/email\.split\("@"\)\[0\]\.size\(\) <= (\d+)/.exec(body)?.[1]);
  const accepted = (email: string) =>
    email.length <= maxLength &&
    (email.split('@')[0] ?? '').length <= maxLocal &&
    patterns.every((pattern) => pattern.regex.test(email) !== pattern.negated);

  it('are found in the rules, use only what RE2 supports, and need no escaping in a rules string', () => {
    expect(patterns.map((pattern) => pattern.negated)).toEqual([false, true]);
    for (const { source } of patterns) {
      // No lookaround or backreference (RE2 has neither), and no backslash (rules string escapes would apply).
      expect(source).not.toMatch(/\(\?[=!<]|\\/);
    }
    expect([maxLength, maxLocal]).toEqual([EMAIL_MAX_LENGTH, LOCAL_PART_MAX_LENGTH]);
  });

  it.each(
    emailGrammarTable.map(([address, verdict]) => [JSON.stringify(address), address, verdict] as const),
  )('judges %s as the grammar table does', (_label, address, verdict) => {
    expect(accepted(address)).toBe(verdict);
  });
});

import { describe, expect, it } from 'vitest';
import { canonicalMailbox, hasPlusTag, logKeySecret, mailboxKey } from './mailbox-key';

describe('the mailbox of an address', () => {
  it.each([
    ['Kid.Teen+goody@Gmail.com', 'kidteen@gmail.com'],
    ['k.i.d.t.e.e.n@googlemail.com', 'kidteen@gmail.com'],
    ['KIDTEEN+a+b@GoogleMail.COM', 'kidteen@gmail.com'],
    ['kid.teen+news@outlook.com', 'kid.teen@outlook.com'],
    ['kid+x@icloud.com', 'kid@icloud.com'],
    ['kid+x@proton.me', 'kid@proton.me'],
    // A +tag on any domain: Google Workspace and Microsoft 365 (a school's accounts) deliver it untagged.
    ['kid+1@school-example.org', 'kid@school-example.org'],
    ['kid+goody@school-example.org', 'kid@school-example.org'],
    ['Kid+a+b@School-Example.org', 'kid@school-example.org'],
    ['Kid.Teen+goody@Example.com', 'kid.teen@example.com'],
    // Dots elsewhere name different mailboxes (j.smith and jsmith at one school are two people): kept.
    ['kid.teen@yahoo.com', 'kid.teen@yahoo.com'],
    ['kid.teen@school-example.org', 'kid.teen@school-example.org'],
    // A hyphen is part of many names (mary-jane): never a separator.
    ['mary-jane@school-example.org', 'mary-jane@school-example.org'],
    ['kid-goody@yahoo.com', 'kid-goody@yahoo.com'],
    // Other domains are never folded into one another, nor a subdomain into its parent.
    ['kid@hotmail.com', 'kid@hotmail.com'],
    ['kid@students.school-example.org', 'kid@students.school-example.org'],
    // A local part that is all tag names no mailbox: kept as it is.
    ['+tag@gmail.com', '+tag@gmail.com'],
    ['+goody@x.org', '+goody@x.org'],
  ])('%s is %s', (address, mailbox) => {
    expect(canonicalMailbox(address)).toBe(mailbox);
  });
});

describe('a +tag spelling (one a stranger can make of a mailbox)', () => {
  it.each([
    ['kid+x@school-example.org', true],
    ['Kid+A+B@School-Example.org', true],
    ['kidteen+goody@gmail.com', true],
    ['kid@school-example.org', false],
    // A dotted Gmail is the mailbox's own name as its owner may write it, not a tag.
    ['Kid.Teen@googlemail.com', false],
    // `+tag` alone is its own mailbox (canonicalMailbox keeps it), not a tag of one.
    ['+goody@x.org', false],
  ])('%s: %s', (address, tagged) => {
    expect(hasPlusTag(address)).toBe(tagged);
  });
});

describe('the mailbox key', () => {
  it('is one key for every spelling of one mailbox, another for another mailbox or another secret', () => {
    const key = mailboxKey('secret', 'kidteen@gmail.com');
    expect(mailboxKey('secret', 'Kid.Teen+x@googlemail.com')).toBe(key);
    expect(mailboxKey('secret', 'kidteen2@gmail.com')).not.toBe(key);
    expect(mailboxKey('another secret', 'kidteen@gmail.com')).not.toBe(key);
    // A Firestore document id: base64url of an HMAC-SHA256.
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('is one key for every +tag of a mailbox on any domain, and the untagged key is the one it always was', () => {
    const key = mailboxKey('secret', 'kid@school-example.org');
    // Pinned: a key that changed would lose every record and suppression entry stored under it.
    expect(key).toBe('NJxSvnvns4LfQ_62Hc4IIP3z0Td1kzWQf9RORd75Gss');
    for (const spelling of [
      'kid+1@school-example.org',
      'kid+goody@school-example.org',
      'Kid@School-Example.org',
    ]) {
      expect(mailboxKey('secret', spelling)).toBe(key);
    }
    expect(mailboxKey('secret', '+goody@x.org')).not.toBe(mailboxKey('secret', 'goody@x.org'));
    expect(mailboxKey('secret', 'kid2@school-example.org')).not.toBe(key);
  });

  it('is not the plain SHA-256 a list of candidate addresses would confirm', async () => {
    const { createHash } = await import('node:crypto');
    const plain = createHash('sha256').update('kidteen@gmail.com').digest('base64url');
    expect(mailboxKey('secret', 'kidteen@gmail.com')).not.toBe(plain);
  });

  it('refuses an empty secret', () => {
    expect(() => mailboxKey('', 'kid@example.com')).toThrow(/MAILBOX_KEY_SECRET/);
  });

  it('makes the logs a key of their own when the function has no MAILBOX_KEY_SECRET', () => {
    const saved = process.env.MAILBOX_KEY_SECRET;
    try {
      delete process.env.MAILBOX_KEY_SECRET;
      const madeUp = logKeySecret();
      expect(madeUp).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(logKeySecret()).toBe(madeUp);
    } finally {
      process.env.MAILBOX_KEY_SECRET = saved;
    }
    expect(logKeySecret()).toBe(saved);
  });
});

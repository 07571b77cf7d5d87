import { describe, expect, it } from 'vitest';
import { canonicalMailbox, logKeySecret, mailboxKey } from './mailbox-key';

describe('the mailbox of an address', () => {
  it.each([
    ['Kid.Teen+goody@Gmail.com', 'kidteen@gmail.com'],
    ['k.i.d.t.e.e.n@googlemail.com', 'kidteen@gmail.com'],
    ['KIDTEEN+a+b@GoogleMail.COM', 'kidteen@gmail.com'],
    ['kid.teen+news@outlook.com', 'kid.teen@outlook.com'],
    ['kid+x@icloud.com', 'kid@icloud.com'],
    ['kid+x@proton.me', 'kid@proton.me'],
    // Elsewhere dots and + tags may be different mailboxes: only the case is folded.
    ['Kid.Teen+goody@Example.com', 'kid.teen+goody@example.com'],
    ['kid.teen@yahoo.com', 'kid.teen@yahoo.com'],
    // A local part that is all tag names no mailbox: kept as it is.
    ['+tag@gmail.com', '+tag@gmail.com'],
  ])('%s is %s', (address, mailbox) => {
    expect(canonicalMailbox(address)).toBe(mailbox);
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

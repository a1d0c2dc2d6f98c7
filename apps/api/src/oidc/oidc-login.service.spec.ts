import { describe, expect, it } from '@jest/globals';
import { unstorableTextReason } from '@fleet/contracts';
import { sessionName } from './oidc-login.service.js';

describe('sessionName', () => {
  it('prefixes the username and keeps a short one whole', () => {
    expect(sessionName('alice@example.com')).toBe('oidc:alice@example.com');
  });

  it('cuts at 100 characters by code point, never leaving half a surrogate pair', () => {
    // 94 letters then emoji: a UTF-16 cut at 100 would split the fourth emoji.
    const name = sessionName(`${'a'.repeat(94)}${'😀'.repeat(10)}`);
    expect(Array.from(name)).toHaveLength(100);
    expect(unstorableTextReason(name)).toBeUndefined();
    expect(name.endsWith('😀'.repeat(1))).toBe(true);
  });
});

import { describe, expect, it } from '@jest/globals';
import { findUnstorableText, unstorableTextReason } from './storable-text.js';

describe('storable text', () => {
  it('admits any valid Unicode, astral characters (surrogate pairs) included', () => {
    for (const text of ['', 'plain', 'ümlaut 斸', '😀 pair', '\u202e', 'tab\tnewline\n\u0001'])
      expect(unstorableTextReason(text)).toBeUndefined();
  });

  it('refuses NUL and unpaired surrogates, high or low, anywhere in the string', () => {
    expect(unstorableTextReason('a\u0000b')).toMatch(/NUL/);
    for (const text of ['\ud800', 'x\ud83d', '\udfffx', 'a\ude00b', '\ud83d\ud83d\ude00x\ude00'])
      expect(unstorableTextReason(text)).toMatch(/unpaired/);
  });

  it('names the path of the first culprit, in values and in keys', () => {
    expect(findUnstorableText({ a: [{ b: 'ok' }, { c: 'x\u0000' }] })).toEqual({
      path: ['a', 1, 'c'],
      reason: 'must not contain the NUL character (U+0000)',
    });
    expect(findUnstorableText({ m: { ['k\ud800']: 1 } })).toMatchObject({ path: ['m', 'k\ud800'] });
    expect(findUnstorableText({ a: 1, b: [true, null, 'fine'] })).toBeUndefined();
    expect(findUnstorableText(JSON.parse('{"m":{"ok":1,"__proto__":2}}'))).toMatchObject({
      path: ['m', '__proto__'],
    });
  });
});

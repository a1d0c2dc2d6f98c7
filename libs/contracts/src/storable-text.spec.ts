import { describe, expect, it } from '@jest/globals';
import {
  findUnstorableText,
  mayHoldUnstorableText,
  unstorableTextReason,
} from './storable-text.js';

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

  it('reads off the JSON text whether the value can hold unstorable text: never false when the walk finds some', () => {
    const pieces = [
      'a',
      'é',
      '\u0000',
      '\ud800',
      '\udc00',
      '\ud83d\ude00',
      '__proto__',
      '"',
      '\\',
      '\n',
    ];
    const randomString = (seed: number) => {
      let out = '';
      for (let i = 0; i < 4; i++) out += pieces[(seed >> (i * 4)) % pieces.length]!;
      return out;
    };
    for (let seed = 0; seed < 5000; seed++) {
      const key = randomString(seed * 7919);
      const value = {
        clusterId: 'x',
        [key]: [randomString(seed), { nested: randomString(seed * 31) }],
      };
      const text = JSON.stringify(value);
      if (findUnstorableText(JSON.parse(text))) expect(mayHoldUnstorableText(text)).toBe(true);
    }
    // Escapes spelled by hand, as a client other than JSON.stringify may send them.
    for (const text of [
      '{"m":"\\u0000"}',
      '{"m":"\\uD800"}',
      '{"\\u005f_proto__":{}}',
      '{"__proto__":{}}',
    ]) {
      expect(findUnstorableText(JSON.parse(text))).toBeDefined();
      expect(mayHoldUnstorableText(text)).toBe(true);
    }
    // What a sidecar sends: no escape, nothing to walk for.
    expect(mayHoldUnstorableText(JSON.stringify({ conditions: [{ message: 'ok é ✓' }] }))).toBe(
      false,
    );
  });
});

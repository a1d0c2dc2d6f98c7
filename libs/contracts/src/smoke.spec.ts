import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';

describe('smoke', () => {
  it('runs ESM TypeScript', () => {
    expect(parse('a: 1')).toEqual({ a: 1 });
  });
});

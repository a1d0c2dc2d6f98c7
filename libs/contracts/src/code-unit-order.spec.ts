import { describe, expect, it } from '@jest/globals';
import { compareCodeUnits } from './code-unit-order.js';

describe('compareCodeUnits', () => {
  it('orders as Go and the API server do: by code unit, upper case before lower case', () => {
    expect(['b', 'B', 'a', 'A', '10', '9', 'é', 'e'].sort(compareCodeUnits)).toEqual([
      '10',
      '9',
      'A',
      'B',
      'a',
      'b',
      'e',
      'é',
    ]);
    expect(compareCodeUnits('x', 'x')).toBe(0);
  });
});

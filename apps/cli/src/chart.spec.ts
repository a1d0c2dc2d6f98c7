import { describe, expect, it } from '@jest/globals';
import { chart, fit, sparkline } from './chart.js';

describe('terminal chart', () => {
  it('scales values to eight levels, gaps as spaces', () => {
    expect(sparkline([0, 0.5, 1, null, 1], 0, 1)).toBe('▁▅█ █');
    expect(sparkline([3, 3], 3, 3)).toBe('▁▁');
  });

  it('averages neighbours to fit the width, ignoring gaps', () => {
    expect(fit([1, 3, null, null, 5, 7], 3)).toEqual([2, null, 6]);
    expect(fit([1, 2], 10)).toEqual([1, 2]);
  });

  it('labels each series with min, avg and max', () => {
    const text = chart(
      [
        { label: 'available', values: [1, 0, 1, 1], scale: [0, 1], format: (v) => v.toFixed(2) },
        { label: 'nodes', values: [null, null], format: String },
      ],
      80,
    );
    expect(text).toBe('available  █▁██  min 0.00  avg 0.75  max 1.00\nnodes      (no data)\n');
  });
});

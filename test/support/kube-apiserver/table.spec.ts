import { describe, expect, it } from '@jest/globals';

import { humanDuration, jsonPath } from './table.js';

describe('Table printing helpers', () => {
  it.each([
    [1_000, '1s'],
    [119_000, '119s'],
    [125_000, '2m5s'],
    [600_000, '10m'],
    [3 * 3_600_000 + 5 * 60_000, '3h5m'],
    [30 * 3_600_000, '30h'],
    [3 * 86_400_000 + 2 * 3_600_000, '3d2h'],
    [40 * 86_400_000, '40d'],
    [(3 * 365 + 4) * 86_400_000, '3y4d'],
    [-5_000, '<invalid>'],
  ])('humanDuration(%i) is %s, as apimachinery prints it', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('evaluates the JSONPath subset printer columns use', () => {
    const o = {
      spec: { nodeClassRef: { name: 'default' } },
      status: {
        conditions: [
          { type: 'Launched', status: 'True' },
          { type: 'Ready', status: 'False' },
        ],
      },
    };
    expect(jsonPath(o, '.spec.nodeClassRef.name')).toEqual(['default']);
    expect(jsonPath(o, '.status.conditions[?(@.type=="Ready")].status')).toEqual(['False']);
    expect(jsonPath(o, '.status.conditions[*].type')).toEqual(['Launched', 'Ready']);
    expect(jsonPath(o, '.status.conditions[-1].type')).toEqual(['Ready']);
    expect(jsonPath(o, '.spec.missing')).toEqual([]);
    expect(() => jsonPath(o, 'spec..x')).toThrow('unrecognized JSONPath');
  });
});

import { describe, expect, it } from '@jest/globals';
import { chart, fit, sparkline } from './chart.js';
import { effectiveStep, historyText } from './commands/cluster-activity.js';

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

describe('clusters history', () => {
  const point = (at: string, available: number) => ({
    at,
    samples: 4,
    available,
    progressing: 0,
    degraded: 1 - available,
    nodes: 3,
    vcpus: 12,
  });

  it('uses the step the API uses', () => {
    expect(effectiveStep(3600, 60)).toBe(60);
    expect(effectiveStep(86_400, undefined)).toBe(432);
    expect(effectiveStep(7 * 86_400, 60)).toBe(3600);
  });

  it('places the points the API returns on the step grid, gaps where no report came', () => {
    const from = new Date('2026-01-01T00:00:00Z');
    const to = new Date('2026-01-01T00:05:00Z');
    const text = historyText(
      'ocp-east-1',
      [point('2026-01-01T00:00:00Z', 1), point('2026-01-01T00:03:00Z', 0)],
      { from, to, step: 60, since: '5m' },
      80,
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe('cluster/ocp-east-1 health, last 5m, step 1m: 5 steps, 2 with reports');
    expect(lines[1]).toBe('available    █  ▁   min 0%  avg 50%  max 100%');
    expect(text).toMatch(
      /\nAT +SAMPLES +AVAILABLE +PROGRESSING +DEGRADED +NODES +VCPUS\n2026-01-01T00:00:00Z +4 +100% +0% +0% +3 +12\n/,
    );
  });
});

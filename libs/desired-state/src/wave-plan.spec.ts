import { describe, expect, it } from '@jest/globals';
import { DEFAULT_WAVE_STEPS, planWaves, stepTarget, WaveSteps } from './wave-plan.js';

const fleet = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
    name: `c-${String(i).padStart(3, '0')}`,
  }));
const sizes = (waves: unknown[][]) => waves.map((w) => w.length);

describe('stepTarget', () => {
  it('rounds percentages up, never below 1 nor above the set', () => {
    expect(stepTarget({ percent: 10 }, 6)).toBe(1);
    expect(stepTarget({ percent: 50 }, 7)).toBe(4);
    expect(stepTarget({ percent: 1 }, 3)).toBe(1);
    expect(stepTarget({ percent: 100 }, 3)).toBe(3);
    expect(stepTarget({ count: 50 }, 3)).toBe(3);
  });
});

describe('planWaves', () => {
  it('default plan: canary, 10 %, 50 %, the rest; empty steps dropped', () => {
    expect(sizes(planWaves(fleet(6), DEFAULT_WAVE_STEPS))).toEqual([1, 2, 3]);
    expect(sizes(planWaves(fleet(100), DEFAULT_WAVE_STEPS))).toEqual([1, 9, 40, 50]);
    expect(sizes(planWaves(fleet(1), DEFAULT_WAVE_STEPS))).toEqual([1]);
    expect(sizes(planWaves(fleet(2), DEFAULT_WAVE_STEPS))).toEqual([1, 1]);
  });

  it('counts are cumulative, and a plan that stops short gets a last wave with the rest', () => {
    expect(sizes(planWaves(fleet(10), [{ count: 2 }, { count: 5 }]))).toEqual([2, 3, 5]);
    expect(sizes(planWaves(fleet(3), [{ count: 2 }, { count: 5 }]))).toEqual([2, 1]);
  });

  it('mixes counts and percentages by their cumulative targets', () => {
    expect(
      sizes(planWaves(fleet(20), [{ count: 1 }, { percent: 25 }, { count: 10 }, { percent: 100 }])),
    ).toEqual([1, 4, 5, 10]);
    // 25 % of 20 is 5, already covered by count 6: that step adds nobody.
    expect(sizes(planWaves(fleet(20), [{ count: 6 }, { percent: 25 }, { percent: 100 }]))).toEqual([
      6, 14,
    ]);
  });

  it('covers every cluster exactly once, ordered by name whatever the input order', () => {
    const clusters = fleet(37);
    const shuffled = [...clusters].reverse();
    const waves = planWaves(shuffled, DEFAULT_WAVE_STEPS);
    expect(waves.flat().map((c) => c.name)).toEqual(clusters.map((c) => c.name));
    expect(planWaves(shuffled, DEFAULT_WAVE_STEPS)).toEqual(
      planWaves(clusters, DEFAULT_WAVE_STEPS),
    );
  });

  it('orders equal names by id', () => {
    const twins = [
      { id: 'b', name: 'x' },
      { id: 'a', name: 'x' },
    ];
    expect(
      planWaves(twins, [{ count: 1 }])
        .flat()
        .map((c) => c.id),
    ).toEqual(['a', 'b']);
  });

  it('plans nothing for an empty set', () => {
    expect(planWaves([], DEFAULT_WAVE_STEPS)).toEqual([]);
  });
});

describe('WaveSteps', () => {
  it('accepts growing steps of either kind', () => {
    expect(
      WaveSteps.safeParse([{ count: 1 }, { percent: 10 }, { count: 5 }, { percent: 100 }]).success,
    ).toBe(true);
  });

  it.each([
    [[], 'must name at least one wave'],
    [[{ percent: 0 }], 'must be 1–100'],
    [[{ percent: 101 }], 'must be 1–100'],
    [[{ count: 0 }], 'must be at least 1'],
    [[{ percent: 50 }, { percent: 50 }], 'percentages must increase from wave to wave'],
    [[{ count: 3 }, { count: 2 }], 'counts must increase from wave to wave'],
    [[{ percent: 1.5 }], undefined],
  ])('refuses %j', (steps, message) => {
    const result = WaveSteps.safeParse(steps);
    expect(result.success).toBe(false);
    if (message) expect(result.error?.issues.map((i) => i.message)).toContain(message);
  });
});

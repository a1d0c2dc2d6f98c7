import { describe, expect, it } from '@jest/globals';
import { planStages, planWaves, type WaveStep } from '@fleet/desired-state';
import {
  planNamedStages,
  splitIntoWaves,
  waveSizes,
} from '../../apps/console/src/lib/rollout-plan.js';

// The console previews a rollout's waves without bundling the API's planner (it needs zod): the
// preview must be the plan the API then makes, for every size and strategy shape.
describe("the console's wave preview", () => {
  const strategies: WaveStep[][] = [
    [{ count: 1 }, { percent: 10 }, { percent: 50 }, { percent: 100 }],
    [{ count: 2 }, { percent: 50 }],
    [{ percent: 25 }, { count: 3 }, { percent: 60 }],
    [{ count: 500 }],
    [{ percent: 1 }, { percent: 2 }, { percent: 3 }],
  ];

  it('is the plan the API makes', () => {
    for (const steps of strategies) {
      for (let total = 1; total <= 120; total++) {
        const clusters = Array.from({ length: total }, (_, i) => ({
          id: `id-${i}`,
          name: `c-${String(i).padStart(3, '0')}`,
        }));
        const api = planWaves(clusters, steps).map((w) => w.map((c) => c.name));
        const preview = splitIntoWaves(
          clusters.map((c) => c.name),
          waveSizes(total, steps),
        );
        expect({ total, steps, preview }).toEqual({ total, steps, preview: api });
      }
    }
  });

  it("is the plan the API makes from a named strategy's count and percent stages, gates included", () => {
    const gated = (steps: WaveStep[]) =>
      steps.map((step, i) => ({
        ...step,
        minHealthySeconds: 10 * i,
        pauseSeconds: i % 2 ? 30 * i : 0,
        approval: i % 3 === 1,
      }));
    for (const steps of strategies) {
      const stages = gated(steps);
      for (let total = 1; total <= 120; total++) {
        const clusters = Array.from({ length: total }, (_, i) => ({
          id: `id-${i}`,
          name: `c-${String(i).padStart(3, '0')}`,
          labels: {},
        }));
        const api = planStages(clusters, stages).map((w) => ({
          size: w.clusters.length,
          minHealthySeconds: w.minHealthySeconds ?? stages[0]!.minHealthySeconds,
          pauseSeconds: w.pauseSeconds,
          approval: w.approval,
        }));
        expect({ total, steps, preview: planNamedStages(total, stages) }).toEqual({
          total,
          steps,
          preview: api,
        });
      }
    }
  });
});

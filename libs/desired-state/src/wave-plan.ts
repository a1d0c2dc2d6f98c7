import { z } from 'zod';

/** One step of a rollout: a cumulative share of the selected clusters, as a percentage or a count. */
export const WaveStep = z.union([
  z
    .object({ percent: z.number().int().min(1, 'must be 1–100').max(100, 'must be 1–100') })
    .strict(),
  z
    .object({
      count: z.number().int().min(1, 'must be at least 1').max(100_000, 'must be at most 100000'),
    })
    .strict(),
]);
export type WaveStep = z.infer<typeof WaveStep>;

/** 1 cluster first (a canary), then 10 %, 50 % and all of them. */
export const DEFAULT_WAVE_STEPS: readonly WaveStep[] = [
  { count: 1 },
  { percent: 10 },
  { percent: 50 },
  { percent: 100 },
];

export const WaveSteps = z
  .array(WaveStep)
  .min(1, 'must name at least one wave')
  .max(20, 'at most 20 waves')
  .superRefine((steps, ctx) => {
    // Each kind must grow; mixed kinds are compared once the set's size is known (planWaves).
    let lastPercent = 0;
    let lastCount = 0;
    steps.forEach((step, i) => {
      if ('percent' in step) {
        if (step.percent <= lastPercent)
          ctx.addIssue({
            code: 'custom',
            path: [i, 'percent'],
            message: 'percentages must increase from wave to wave',
          });
        lastPercent = step.percent;
      } else {
        if (step.count <= lastCount)
          ctx.addIssue({
            code: 'custom',
            path: [i, 'count'],
            message: 'counts must increase from wave to wave',
          });
        lastCount = step.count;
      }
    });
  });

/** The cumulative number of clusters a step covers out of `total`: rounded up, at least 1, at most total. */
export function stepTarget(step: WaveStep, total: number): number {
  const raw = 'percent' in step ? Math.ceil((step.percent * total) / 100) : step.count;
  return Math.min(total, Math.max(1, raw));
}

/**
 * Splits the clusters into waves. Steps are cumulative ("1, then 10 %, then 50 %"); a step that
 * adds nobody (10 % of 6 is still the canary) is dropped, and whatever the steps leave over forms
 * a last wave, so a rollout always ends with every selected cluster. Clusters are ordered by name
 * (then id) so the same selection always yields the same plan.
 */
export function planWaves<T extends { id: string; name: string }>(
  clusters: readonly T[],
  steps: readonly WaveStep[],
): T[][] {
  const ordered = [...clusters].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  );
  const waves: T[][] = [];
  let done = 0;
  for (const step of steps) {
    const target = stepTarget(step, ordered.length);
    if (target <= done) continue;
    waves.push(ordered.slice(done, target));
    done = target;
  }
  if (done < ordered.length) waves.push(ordered.slice(done));
  return waves;
}

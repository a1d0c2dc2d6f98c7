import type { RolloutChangeInput } from '../graphql/generated.js';

/** A cumulative step of a rollout's strategy, as the API takes it. */
export type WaveStep = { percent: number } | { count: number };

/** The API's default: a canary, then 10 %, 50 % and every cluster. */
export const DEFAULT_WAVE_STEPS: WaveStep[] = [
  { count: 1 },
  { percent: 10 },
  { percent: 50 },
  { percent: 100 },
];

/**
 * The wave sizes the API will plan for `total` clusters (docs/ROLLOUTS.md): steps are cumulative,
 * a percentage rounds up, a step covers at least 1 and at most all, a step that adds nobody is
 * dropped and the rest forms a last wave. The console has no zod, so it does not bundle the
 * API's planner; test/console/wave-plan-parity.spec.ts checks this against it.
 */
export function waveSizes(total: number, steps: readonly WaveStep[]): number[] {
  const sizes: number[] = [];
  let done = 0;
  for (const step of steps) {
    const raw = 'percent' in step ? Math.ceil((step.percent * total) / 100) : step.count;
    const target = Math.min(total, Math.max(1, raw));
    if (target <= done) continue;
    sizes.push(target - done);
    done = target;
  }
  if (done < total) sizes.push(total - done);
  return sizes;
}

/** Splits clusters already in the API's order (by name) into the planned waves. */
export function splitIntoWaves<T>(ordered: readonly T[], sizes: readonly number[]): T[][] {
  const waves: T[][] = [];
  let at = 0;
  for (const size of sizes) {
    waves.push(ordered.slice(at, at + size));
    at += size;
  }
  return waves;
}

/**
 * "1, 10%, 50%, 100%" → steps. Null with the reason for text that is not a list of counts and
 * percentages; whether they grow is the API's to say (it names the offending step).
 */
export function parseWaveSteps(text: string): { steps: WaveStep[] } | { error: string } {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (!parts.length) return { error: 'give at least one wave, e.g. 1, 10%, 50%, 100%' };
  const steps: WaveStep[] = [];
  for (const part of parts) {
    const match = /^(\d+)\s*(%?)$/.exec(part);
    if (!match) return { error: `"${part}" is neither a count (5) nor a percentage (10%)` };
    const n = Number(match[1]);
    steps.push(match[2] ? { percent: n } : { count: n });
  }
  return { steps };
}

/**
 * One step or named-strategy stage as an SRE reads it: a count, a percentage, or the selector a
 * stage takes its clusters by. A stage copied from a named strategy carries all three keys, the
 * unused ones null, so this looks at values rather than keys.
 */
export function formatStage(step: {
  selector?: string | null;
  percent?: number | null;
  count?: number | null;
}): string {
  if (step.selector != null) return step.selector ? `selector ${step.selector}` : 'the rest';
  if (step.percent != null) return `${step.percent}%`;
  return String(step.count ?? '?');
}

export const formatWaveSteps = (steps: readonly WaveStep[]): string =>
  steps.map(formatStage).join(', ');

/** What the rollout form offers; each field left at "no change" is left out of the change. */
export interface RolloutChangeForm {
  karpenter: '' | 'enable' | 'disable';
  clusterAutoscalerMode: '' | 'KEEP' | 'DISABLE' | 'MIGRATE';
  logLevel: '' | 'debug' | 'info' | 'error';
  karpenterVersion: string;
}

export const EMPTY_CHANGE: RolloutChangeForm = {
  karpenter: '',
  clusterAutoscalerMode: '',
  logLevel: '',
  karpenterVersion: '',
};

export function rolloutChange(form: RolloutChangeForm): RolloutChangeInput {
  const change: RolloutChangeInput = {};
  if (form.karpenter) change.enabled = form.karpenter === 'enable';
  if (form.clusterAutoscalerMode) change.clusterAutoscalerMode = form.clusterAutoscalerMode;
  if (form.logLevel) change.logLevel = form.logLevel;
  if (form.karpenterVersion.trim()) change.karpenterVersion = form.karpenterVersion.trim();
  return change;
}

/** A stored change (the Rollout's `change` JSON) in a line an SRE reads. */
export function describeChange(change: unknown): string {
  const c = (change ?? {}) as Record<string, unknown>;
  // A profile's rollout (docs/PROFILES.md § Rollouts) binds its clusters to one revision.
  if (typeof c.profile === 'string' && typeof c.revision === 'number')
    return `profile ${c.profile}@${c.revision}`;
  const parts: string[] = [];
  if (typeof c.enabled === 'boolean')
    parts.push(c.enabled ? 'enable Karpenter' : 'disable Karpenter');
  if (typeof c.clusterAutoscalerMode === 'string')
    parts.push(`Cluster Autoscaler ${c.clusterAutoscalerMode}`);
  if (typeof c.logLevel === 'string') parts.push(`log level ${c.logLevel}`);
  if (typeof c.karpenterVersion === 'string') parts.push(`Karpenter ${c.karpenterVersion}`);
  if (typeof c.operandImage === 'string') parts.push(`operand image ${c.operandImage}`);
  if (c.featureGates && typeof c.featureGates === 'object')
    parts.push(`feature gates ${JSON.stringify(c.featureGates)}`);
  const upsert = c.upsertNodePool as { name?: string } | undefined;
  if (upsert?.name) parts.push(`NodePool ${upsert.name} (create or replace)`);
  if (typeof c.deleteNodePool === 'string') parts.push(`delete NodePool ${c.deleteNodePool}`);
  return parts.join(', ') || 'no change';
}

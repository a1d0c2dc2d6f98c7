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

/** A named strategy's health gates in a line; Degraded or Stale always fails a cluster. */
export function healthGates(s: {
  maxPendingPodSeconds?: number | null;
  maxNodeClaimLaunchFailures?: number | null;
}): string {
  return [
    'Degraded or Stale',
    s.maxPendingPodSeconds != null
      ? `unschedulable pod pending over ${s.maxPendingPodSeconds} s`
      : null,
    s.maxNodeClaimLaunchFailures != null
      ? `over ${s.maxNodeClaimLaunchFailures} NodeClaim launch failures`
      : null,
  ]
    .filter(Boolean)
    .join('; ');
}

/** A stage of a named strategy as rolloutStrategies returns it (unused keys null). */
export interface NamedStage {
  selector?: string | null;
  percent?: number | null;
  count?: number | null;
  minHealthySeconds: number;
  pauseSeconds: number;
  approval: boolean;
}

/** One wave a named strategy would form: its size and the gates it carries from its stage. */
export interface NamedWave {
  size: number;
  /** The last wave of clusters no stage took holds the rollout's, which is the first stage's. */
  minHealthySeconds: number;
  pauseSeconds: number;
  approval: boolean;
}

/**
 * The waves a named strategy forms over `total` clusters, as planStages in
 * libs/desired-state/src/strategy.ts does at start (test/console/wave-plan-parity.spec.ts checks
 * it): a stage that adds nobody is dropped, its pause and gate moving to the wave before it, and
 * clusters no stage took form a last wave. Null when a stage takes clusters by selector: which
 * clusters match it is decided on their labels at start, and the preview does not load labels.
 */
export function planNamedStages(total: number, stages: readonly NamedStage[]): NamedWave[] | null {
  if (stages.some((stage) => stage.selector != null)) return null;
  const waves: NamedWave[] = [];
  let done = 0;
  for (const stage of stages) {
    const raw =
      stage.percent != null ? Math.ceil((stage.percent * total) / 100) : (stage.count ?? 0);
    const target = Math.min(total, Math.max(1, raw));
    if (target <= done) {
      const before = waves.at(-1);
      if (before) {
        before.approval ||= stage.approval;
        before.pauseSeconds = Math.max(before.pauseSeconds, stage.pauseSeconds);
      }
      continue;
    }
    waves.push({
      size: target - done,
      minHealthySeconds: stage.minHealthySeconds,
      pauseSeconds: stage.pauseSeconds,
      approval: stage.approval,
    });
    done = target;
  }
  if (done < total)
    waves.push({
      size: total - done,
      minHealthySeconds: stages[0]?.minHealthySeconds ?? 60,
      pauseSeconds: 0,
      approval: false,
    });
  return waves;
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

import {
  LabelSelectorError,
  matchesLabelSelector,
  parseLabelSelector,
  type ClusterMetrics,
} from '@fleet/contracts';
import { z } from 'zod';
import { stepTarget } from './wave-plan.js';

const seconds = (max: number) =>
  z.number().int().min(0, `must be 0–${max}`).max(max, `must be 0–${max}`);

/** GraphQL hands absent input fields in as null; stored stages carry only what was given. */
const withoutNulls = (value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).filter(([, v]) => v != null))
    : value;

/**
 * One stage of a named strategy: which clusters it adds — the remaining clusters a label
 * selector matches, or a cumulative percentage/count of all the rollout's clusters — how long
 * each must stay healthy, and what happens once it succeeded (a timed pause, then an approval
 * gate) before the next stage starts.
 */
export const StrategyStage = z.preprocess(
  withoutNulls,
  z
    .object({
      selector: z
        .string()
        .max(4096, 'must be no more than 4096 characters')
        .superRefine((selector, ctx) => {
          if (selector.trim() === '') {
            ctx.addIssue({
              code: 'custom',
              message: 'must select something; use percent: 100 for every remaining cluster',
            });
            return;
          }
          try {
            parseLabelSelector(selector);
          } catch (err) {
            if (!(err instanceof LabelSelectorError)) throw err;
            ctx.addIssue({ code: 'custom', message: `invalid label selector: ${err.message}` });
          }
        })
        .optional(),
      percent: z.number().int().min(1, 'must be 1–100').max(100, 'must be 1–100').optional(),
      count: z
        .number()
        .int()
        .min(1, 'must be at least 1')
        .max(100_000, 'must be at most 100000')
        .optional(),
      minHealthySeconds: seconds(86_400).default(60),
      approval: z.boolean().default(false),
      pauseSeconds: seconds(604_800).default(0),
    })
    .strict()
    .superRefine((stage, ctx) => {
      const kinds = (['selector', 'percent', 'count'] as const).filter((k) => stage[k] != null);
      if (kinds.length !== 1)
        ctx.addIssue({
          code: 'custom',
          path: kinds.length ? [kinds[1]!] : ['selector'],
          message: 'give exactly one of selector, percent or count',
        });
    }),
);
export type StrategyStage = z.infer<typeof StrategyStage>;

export const StrategyStages = z
  .array(StrategyStage)
  .min(1, 'must name at least one stage')
  .max(20, 'at most 20 stages')
  .superRefine((stages, ctx) => {
    // Percentages and counts are cumulative, so each must grow (as inline waves must).
    let lastPercent = 0;
    let lastCount = 0;
    stages.forEach((stage, i) => {
      if (stage.percent != null) {
        if (stage.percent <= lastPercent)
          ctx.addIssue({
            code: 'custom',
            path: [i, 'percent'],
            message: 'percentages must increase from stage to stage',
          });
        lastPercent = stage.percent;
      } else if (stage.count != null) {
        if (stage.count <= lastCount)
          ctx.addIssue({
            code: 'custom',
            path: [i, 'count'],
            message: 'counts must increase from stage to stage',
          });
        lastCount = stage.count;
      }
    });
  });

/** Thresholds of the health gates that read Karpenter's own signals; null (or absent) is off. */
export const KarpenterHealthGates = z.object({
  maxNodeClaimLaunchFailures: z
    .number()
    .int()
    .min(0, 'must be 0–100000')
    .max(100_000, 'must be 0–100000')
    .nullish()
    .transform((v) => v ?? null),
  maxPendingPodSeconds: z
    .number()
    .int()
    .min(1, 'must be 1–604800')
    .max(604_800, 'must be 1–604800')
    .nullish()
    .transform((v) => v ?? null),
});
export type KarpenterHealthGates = z.infer<typeof KarpenterHealthGates>;

/** Failed clusters a rollout tolerates before it stops: a strategy's and an inline rollout's. */
export const MaxFailures = z
  .number()
  .int()
  .min(0, 'must be 0–100000')
  .max(100_000, 'must be 0–100000')
  .nullish()
  .transform((v) => v ?? 0);

/** How long a wave may take: a strategy's and an inline rollout's. */
export const WaveTimeoutSeconds = z
  .number()
  .int()
  .min(1, 'must be 1–604800')
  .max(604_800, 'must be 1–604800')
  .nullish()
  .transform((v) => v ?? 1800);

/** Everything of a strategy but its name: what a rollout copies at start. */
export const StrategyDefinition = z
  .object({
    stages: StrategyStages,
    maxFailures: MaxFailures,
    waveTimeoutSeconds: WaveTimeoutSeconds,
  })
  .extend(KarpenterHealthGates.shape)
  .superRefine((s, ctx) => {
    const longest = Math.max(...s.stages.map((stage) => stage.minHealthySeconds));
    if (s.waveTimeoutSeconds <= longest)
      ctx.addIssue({
        code: 'custom',
        path: ['waveTimeoutSeconds'],
        message: `must exceed every stage's minHealthySeconds (${longest}), or that stage could never succeed`,
      });
  });
export type StrategyDefinition = z.infer<typeof StrategyDefinition>;

export interface PlannedWave<T> {
  clusters: T[];
  /** The stage's selector, for a selector stage. */
  selector: string | null;
  minHealthySeconds: number | null;
  approval: boolean;
  pauseSeconds: number;
}

/**
 * Splits a rollout's clusters into waves by a strategy's stages. A selector stage takes the
 * clusters not taken yet that its selector matches; a percentage or count is cumulative over all
 * the rollout's clusters (rounded up) and takes the rest in name order. A stage that adds nobody is
 * dropped, its gates moving to the wave before it (they hold the stages after it). With no wave
 * before, a timed pause goes (nothing was changed yet, nothing to soak), but an approval gate
 * cannot: dropping it would let the rollout reach every cluster with no checkpoint, so planning
 * refuses with UnheldApprovalGate (docs/ROLLOUTS.md § Timed pauses and approval gates). The
 * clusters no stage took form a last wave, so a rollout always ends with every cluster it was
 * started over.
 */
/** An approval gate on a stage that matches none of the clusters, with no earlier wave to hold it. */
export class UnheldApprovalGate extends Error {
  constructor(
    readonly stage: number,
    readonly stageSelector: string | null,
    clusters: number,
  ) {
    super(
      `stage ${stage}${stageSelector != null ? ` (selector ${stageSelector})` : ''} has an approval gate but takes none of the ${clusters} clusters, and no earlier stage takes any either: the rollout would reach every cluster with no checkpoint. Select clusters that stage matches, or use a strategy without that gate`,
    );
  }
}

export function planStages<T extends { id: string; name: string; labels: Record<string, string> }>(
  clusters: readonly T[],
  stages: readonly StrategyStage[],
): PlannedWave<T>[] {
  let remaining = [...clusters].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  );
  const waves: PlannedWave<T>[] = [];
  let done = 0;
  for (const [index, stage] of stages.entries()) {
    let taken: T[];
    if (stage.selector != null) {
      const requirements = parseLabelSelector(stage.selector);
      taken = remaining.filter((c) => matchesLabelSelector(requirements, c.labels));
    } else {
      const step = stage.percent != null ? { percent: stage.percent } : { count: stage.count! };
      taken = remaining.slice(0, Math.max(0, stepTarget(step, clusters.length) - done));
    }
    if (!taken.length) {
      const before = waves.at(-1);
      if (before) {
        before.approval ||= stage.approval;
        before.pauseSeconds = Math.max(before.pauseSeconds, stage.pauseSeconds);
      } else if (stage.approval && clusters.length) {
        throw new UnheldApprovalGate(index, stage.selector ?? null, clusters.length);
      }
      continue;
    }
    const picked = new Set(taken);
    remaining = remaining.filter((c) => !picked.has(c));
    done += taken.length;
    waves.push({
      clusters: taken,
      selector: stage.selector ?? null,
      minHealthySeconds: stage.minHealthySeconds,
      approval: stage.approval,
      pauseSeconds: stage.pauseSeconds,
    });
  }
  if (remaining.length)
    waves.push({
      clusters: remaining,
      selector: null,
      minHealthySeconds: null,
      approval: false,
      pauseSeconds: 0,
    });
  return waves;
}

/** When the change reached a cluster and when its metrics were reported: what the gates count from. */
export interface GateClock {
  now: Date;
  /** When the rollout applied the change to the cluster; null: count everything reported. */
  appliedAt: Date | null;
  /** When the metrics were reported (dates a legacy `oldestPendingPodSeconds`). */
  reportedAt: Date | null;
}

/** Each metric a gate reads, parsed on its own: one malformed metric does not blind the other gate. */
const GateMetrics = {
  nodeClaimLaunchFailures: z.number().int().nonnegative(),
  nodeClaimLaunchFailureTimes: z.array(z.iso.datetime({ offset: true })).max(64),
  oldestPendingPodSince: z.iso.datetime({ offset: true }),
  oldestPendingPodSeconds: z.number().int().nonnegative(),
};
/** The contract's bound on nodeClaimLaunchFailureTimes. */
const LAUNCH_FAILURE_TIMES = 64;

function gateMetric<K extends keyof typeof GateMetrics>(
  metrics: unknown,
  key: K,
): z.infer<(typeof GateMetrics)[K]> | undefined {
  if (typeof metrics !== 'object' || metrics === null) return undefined;
  const parsed = GateMetrics[key].safeParse((metrics as Record<string, unknown>)[key]);
  return parsed.success ? (parsed.data as z.infer<(typeof GateMetrics)[K]>) : undefined;
}

/**
 * The Karpenter health gate a cluster's last metrics break, as a failure reason, or undefined.
 * Metrics a sidecar does not report (an older one) never fail a cluster: absence is not failure.
 * Only what happened since the change was applied counts (docs/ROLLOUTS.md § Health gates that
 * see Karpenter): launches that failed after `appliedAt`, and a pod's pending time from no
 * earlier than `appliedAt` — a pod stuck since before the change is not the change's doing
 * until it has stayed stuck that long under it.
 */
export function karpenterGateViolation(
  metrics: ClusterMetrics | null | undefined,
  gates: KarpenterHealthGates,
  clock: GateClock,
): string | undefined {
  const from = clock.appliedAt?.getTime() ?? Number.NEGATIVE_INFINITY;
  if (gates.maxNodeClaimLaunchFailures != null) {
    const times = gateMetric(metrics, 'nodeClaimLaunchFailureTimes');
    const total = gateMetric(metrics, 'nodeClaimLaunchFailures');
    let failures: number | undefined;
    if (times) {
      failures = times.filter((t) => Date.parse(t) >= from).length;
      // A full list, all since the change: more may have failed since than it holds. The
      // total then counts (erring towards stopping a cluster failing launches at that scale).
      if (failures === LAUNCH_FAILURE_TIMES && total != null) failures = Math.max(failures, total);
    } else failures = total; // a sidecar from before the times: every failure it sees counts
    if (failures != null && failures > gates.maxNodeClaimLaunchFailures)
      return `NodeClaimLaunchFailures: ${failures} NodeClaims failed to launch (Launched=False) since the change, more than maxNodeClaimLaunchFailures ${gates.maxNodeClaimLaunchFailures}`;
  }
  if (gates.maxPendingPodSeconds != null) {
    const sinceText = gateMetric(metrics, 'oldestPendingPodSince');
    const legacy = gateMetric(metrics, 'oldestPendingPodSeconds');
    let since: number | undefined;
    if (sinceText) since = Date.parse(sinceText);
    else if (legacy && clock.reportedAt) since = clock.reportedAt.getTime() - legacy * 1000;
    if (since !== undefined) {
      const pending = Math.floor((clock.now.getTime() - Math.max(since, from)) / 1000);
      if (pending > gates.maxPendingPodSeconds)
        return `PodsPendingTooLong: an unschedulable pod has been pending for ${pending}s since the change, more than maxPendingPodSeconds ${gates.maxPendingPodSeconds}`;
    }
  }
  return undefined;
}

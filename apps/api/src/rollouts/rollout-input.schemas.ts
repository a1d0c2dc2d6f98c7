import {
  ClusterAutoscalerMode,
  dns1123Subdomain,
  FeatureGates,
  imageByDigest,
  KarpenterVersion,
  LogLevel,
} from '@fleet/contracts';
import {
  DEFAULT_WAVE_STEPS,
  KarpenterHealthGates,
  MaxFailures,
  WaveSteps,
  WaveTimeoutSeconds,
} from '@fleet/desired-state';
import { z } from 'zod';

/** What startRollout may change: the subset of DesiredStateChange a fleet-wide change makes sense for. */
export const RolloutChangeSchema = z
  .object({
    enabled: z.boolean().nullish(),
    clusterAutoscalerMode: ClusterAutoscalerMode.nullish(),
    logLevel: LogLevel.nullish(),
    featureGates: FeatureGates.nullish(),
    upsertNodePool: z
      .object({ name: dns1123Subdomain, spec: z.record(z.string(), z.unknown()) })
      .nullish(),
    deleteNodePool: dns1123Subdomain.nullish(),
    karpenterVersion: KarpenterVersion.nullish(),
    operandImage: imageByDigest.nullish(),
  })
  .superRefine((change, ctx) => {
    if (Object.values(change).every((v) => v == null)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'must change at least one thing' });
    }
    if (change.upsertNodePool && change.deleteNodePool) {
      ctx.addIssue({
        code: 'custom',
        path: ['deleteNodePool'],
        message: 'one NodePool operation per rollout',
      });
    }
  })
  // Stored and applied without the nulls GraphQL hands in.
  .transform((change) => Object.fromEntries(Object.entries(change).filter(([, v]) => v != null)));

const steps = z.preprocess(
  (value) =>
    Array.isArray(value)
      ? value.map((step: unknown) =>
          step && typeof step === 'object'
            ? Object.fromEntries(Object.entries(step).filter(([, v]) => v != null))
            : step,
        )
      : value,
  WaveSteps,
);

export const RolloutStrategySchema = z
  .object({
    waves: steps.nullish().transform((w) => w ?? [...DEFAULT_WAVE_STEPS]),
    minHealthySeconds: z
      .number()
      .int()
      .min(0, 'must be 0–86400')
      .max(86_400, 'must be 0–86400')
      .nullish()
      .transform((v) => v ?? 60),
    maxFailures: MaxFailures,
    waveTimeoutSeconds: WaveTimeoutSeconds,
  })
  .extend(KarpenterHealthGates.shape)
  .superRefine((s, ctx) => {
    if (s.waveTimeoutSeconds <= s.minHealthySeconds) {
      ctx.addIssue({
        code: 'custom',
        path: ['waveTimeoutSeconds'],
        message: 'must exceed minHealthySeconds, or no wave could ever succeed',
      });
    }
  });

/** GraphQL gives each step as {percent, count}; exactly one must be set. */
export function stepShapeViolation(waves: unknown): { index: number } | undefined {
  if (!Array.isArray(waves)) return undefined;
  const index = waves.findIndex(
    (w: { percent?: unknown; count?: unknown } | null) =>
      (w?.percent == null) === (w?.count == null),
  );
  return index >= 0 ? { index } : undefined;
}

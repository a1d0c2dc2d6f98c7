import type { Prisma } from '@fleet/database';
import { StrategyDefinition, type StrategyStage } from '@fleet/desired-state';
import { parseInput, userInputError } from '../common/errors.js';
import type { RolloutStrategyInput } from './dto/rollout.inputs.js';
import { RolloutStrategySchema, stepShapeViolation } from './rollout-input.schemas.js';

/**
 * What a rollout copies of its strategy at start, inline or named: the stages its waves are
 * planned from, the stored steps (`Rollout.waveSteps`), and the rollout-wide thresholds.
 */
export interface ResolvedStrategy {
  /** The named strategy's name; null for an inline strategy. */
  name: string | null;
  steps: Prisma.InputJsonArray;
  stages: StrategyStage[];
  minHealthySeconds: number;
  maxFailures: number;
  waveTimeoutSeconds: number;
  maxNodeClaimLaunchFailures: number | null;
  maxPendingPodSeconds: number | null;
}

/**
 * The strategy a rollout (or a profile write) names: `strategyName`, a RolloutStrategy read now
 * and copied, or the inline `strategy` (its waves become stages without gates). Both at once is
 * refused; neither is the default inline strategy.
 */
export async function resolveStrategy(
  tx: Prisma.TransactionClient,
  inline: RolloutStrategyInput | null | undefined,
  strategyName: string | null | undefined,
): Promise<ResolvedStrategy> {
  if (strategyName != null) {
    if (inline != null)
      throw userInputError('strategyName', 'give either strategy or strategyName, not both');
    const row = await tx.rolloutStrategy.findUnique({ where: { name: strategyName } });
    if (!row) throw userInputError('strategyName', `no rollout strategy named "${strategyName}"`);
    const def = StrategyDefinition.parse(row);
    return {
      name: row.name,
      steps: def.stages,
      stages: def.stages,
      minHealthySeconds: def.stages[0]!.minHealthySeconds,
      maxFailures: def.maxFailures,
      waveTimeoutSeconds: def.waveTimeoutSeconds,
      maxNodeClaimLaunchFailures: def.maxNodeClaimLaunchFailures,
      maxPendingPodSeconds: def.maxPendingPodSeconds,
    };
  }
  const badStep = stepShapeViolation(inline?.waves);
  if (badStep)
    throw userInputError(
      `strategy.waves[${badStep.index}]`,
      'give exactly one of percent or count',
    );
  const s = parseInput(RolloutStrategySchema, inline ?? {}, 'strategy');
  return {
    name: null,
    steps: s.waves,
    stages: s.waves.map((w) => ({
      ...w,
      minHealthySeconds: s.minHealthySeconds,
      approval: false,
      pauseSeconds: 0,
    })),
    minHealthySeconds: s.minHealthySeconds,
    maxFailures: s.maxFailures,
    waveTimeoutSeconds: s.waveTimeoutSeconds,
    maxNodeClaimLaunchFailures: s.maxNodeClaimLaunchFailures,
    maxPendingPodSeconds: s.maxPendingPodSeconds,
  };
}

import type { ClusterAutoscalerState, ReconcileOrder } from '@fleet/contracts';
import type { Logger } from 'pino';
import type { ClusterAutoscalerOutcome } from '../cluster-autoscaler/cluster-autoscaler.js';
import type { ClusterAutoscalerControl } from '../cluster-autoscaler/node-group-sizes.js';
import { describeKubeError } from '../kube/cluster-client.js';
import type { ConditionSet } from './conditions.js';
import { degraded } from './outcome.js';

/** What the phase did: the observed state, or that it failed; `waiting` asks for a re-check. */
export type ClusterAutoscalerPhaseResult =
  { failed: true } | { failed: false; state?: ClusterAutoscalerState; waiting: boolean };

/**
 * The Cluster Autoscaler phase: the order's mode, with the rule that the cluster is never left
 * without an autoscaler. DISABLE removes the Cluster Autoscaler only once Karpenter can take
 * over (its operand Available and its default NodeClass Ready); until then it stays, and a
 * condition says why. Disabling Karpenter brings the Cluster Autoscaler back first, whatever
 * the mode, before Karpenter's capacity is removed.
 */
export class ClusterAutoscalerPhase {
  constructor(
    private readonly cas: ClusterAutoscalerControl | undefined,
    private readonly log: Logger,
  ) {}

  /**
   * Karpenter is enabled. `karpenterNotReady` says what Karpenter still lacks before it can
   * replace the Cluster Autoscaler (undefined: ready).
   */
  async whileEnabled(
    order: ReconcileOrder,
    conditions: ConditionSet,
    karpenterNotReady: () => Promise<string | undefined>,
  ): Promise<ClusterAutoscalerPhaseResult> {
    const mode = order.spec.clusterAutoscalerMode;
    return this.run(conditions, mode, async (cas) => {
      if (mode !== 'DISABLE') return { outcome: await cas.reconcile(mode, true), waiting: false };
      const missing = await karpenterNotReady();
      if (missing === undefined)
        return { outcome: await cas.reconcile(mode, true), waiting: false };
      const outcome = await cas.observe(mode, true);
      // Already removed earlier (Karpenter was ready then): nothing to hold back.
      if (outcome.state.observed !== 'Present') return { outcome, waiting: false };
      this.log.info({ missing }, 'Cluster Autoscaler kept until Karpenter can take over');
      return {
        outcome: withDisabledCondition(outcome, {
          status: 'False',
          reason: 'WaitingForKarpenter',
          message: `clusterAutoscalerMode is DISABLE, but ClusterAutoscaler/default stays until Karpenter can take over, so the cluster is never without an autoscaler: ${missing}`,
        }),
        waiting: true,
      };
    });
  }

  /**
   * Karpenter is being disabled: called before anything of Karpenter is removed. The Cluster
   * Autoscaler comes back from its copy whatever the mode; with DISABLE the cluster would be
   * left without any autoscaler, so the mode is not followed and the condition says so.
   */
  async whileDisabling(
    order: ReconcileOrder,
    conditions: ConditionSet,
  ): Promise<ClusterAutoscalerPhaseResult> {
    const mode = order.spec.clusterAutoscalerMode;
    return this.run(conditions, mode, async (cas) => {
      const restored = await cas.reconcile(mode === 'DISABLE' ? 'KEEP' : mode, false);
      const outcome: ClusterAutoscalerOutcome = {
        ...restored,
        state: { ...restored.state, mode },
      };
      if (mode !== 'DISABLE' || outcome.state.observed !== 'Present')
        return { outcome, waiting: false };
      return {
        outcome: withDisabledCondition(outcome, {
          status: 'False',
          reason: 'KeptWithoutKarpenter',
          message:
            'clusterAutoscalerMode is DISABLE, but Karpenter is not enabled: ClusterAutoscaler/default is kept (restored before Karpenter was removed) so the cluster is never without an autoscaler',
        }),
        waiting: false,
      };
    });
  }

  private async run(
    conditions: ConditionSet,
    mode: ReconcileOrder['spec']['clusterAutoscalerMode'],
    step: (
      cas: ClusterAutoscalerControl,
    ) => Promise<{ outcome: ClusterAutoscalerOutcome; waiting: boolean }>,
  ): Promise<ClusterAutoscalerPhaseResult> {
    if (!this.cas) return { failed: false, waiting: false };
    try {
      const { outcome, waiting } = await step(this.cas);
      if (mode !== 'MIGRATE') {
        conditions.set(
          'ClusterAutoscalerMigration',
          'False',
          'NotMigrating',
          `clusterAutoscalerMode is ${mode}`,
        );
      }
      for (const c of outcome.conditions) conditions.set(c.type, c.status, c.reason, c.message);
      return { failed: false, state: outcome.state, waiting };
    } catch (err) {
      degraded(this.log, conditions, 'ClusterAutoscalerFailed', describeKubeError(err));
      conditions.set(
        'ClusterAutoscalerDisabled',
        'Unknown',
        'ClusterAutoscalerCheckFailed',
        describeKubeError(err),
      );
      return { failed: true };
    }
  }
}

function withDisabledCondition(
  outcome: ClusterAutoscalerOutcome,
  condition: Omit<ClusterAutoscalerOutcome['conditions'][number], 'type'>,
): ClusterAutoscalerOutcome {
  return {
    ...outcome,
    conditions: [
      ...outcome.conditions.filter((c) => c.type !== 'ClusterAutoscalerDisabled'),
      { type: 'ClusterAutoscalerDisabled', ...condition },
    ],
  };
}

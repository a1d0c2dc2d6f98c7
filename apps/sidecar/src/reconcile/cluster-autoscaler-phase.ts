import type { ClusterAutoscalerState, ReconcileOrder } from '@fleet/contracts';
import type { Logger } from 'pino';
import type { ClusterAutoscalerSwitch } from '../cluster-autoscaler/cluster-autoscaler.js';
import { describeKubeError } from '../kube/cluster-client.js';
import type { ConditionSet } from './conditions.js';
import { degraded } from './outcome.js';

/** The Cluster Autoscaler phase: the order's mode, whether Karpenter is enabled or not. */
export class ClusterAutoscalerPhase {
  constructor(
    private readonly cas: ClusterAutoscalerSwitch | undefined,
    private readonly log: Logger,
  ) {}

  async reconcile(
    order: ReconcileOrder,
    conditions: ConditionSet,
  ): Promise<ClusterAutoscalerState | 'failed' | undefined> {
    if (!this.cas) return undefined;
    try {
      const outcome = await this.cas.reconcile(
        order.spec.clusterAutoscalerMode,
        order.spec.enabled,
      );
      if (order.spec.clusterAutoscalerMode !== 'MIGRATE') {
        conditions.set(
          'ClusterAutoscalerMigration',
          'False',
          'NotMigrating',
          `clusterAutoscalerMode is ${order.spec.clusterAutoscalerMode}`,
        );
      }
      for (const c of outcome.conditions) conditions.set(c.type, c.status, c.reason, c.message);
      return outcome.state;
    } catch (err) {
      degraded(this.log, conditions, 'ClusterAutoscalerFailed', describeKubeError(err));
      conditions.set(
        'ClusterAutoscalerDisabled',
        'Unknown',
        'ClusterAutoscalerCheckFailed',
        describeKubeError(err),
      );
      return 'failed';
    }
  }
}

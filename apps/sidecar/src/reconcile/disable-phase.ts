import { NODEPOOL, type ReconcileOrder } from '@fleet/contracts';
import { describeKubeError } from '../kube/cluster-client.js';
import type { ClusterAutoscalerPhase } from './cluster-autoscaler-phase.js';
import type { ConditionSet } from './conditions.js';
import { degraded, describeObject, type Outcome } from './outcome.js';
import type { OwnedObjects } from './owned-objects.js';
import type { ReconcilerDeps } from './reconciler.js';

/** The disable phase: everything the fleet created leaves the cluster, in Karpenter's order. */
export class DisablePhase {
  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly owned: OwnedObjects,
    private readonly clusterAutoscaler: ClusterAutoscalerPhase,
  ) {}

  private get provider() {
    return this.deps.driver.provider;
  }

  /**
   * Disabling, in Karpenter's own order: NodePools go (no new nodes), NodeClaims drain (their
   * finalizers are Karpenter's, so the operand must keep running), then NodeClasses, then the
   * operand and everything else the fleet created, then the Cluster Autoscaler comes back if the
   * order asks for it. Each pass does what it can and reports where it waits.
   *
   * `deletion`: the workload Cluster is being deleted (Cluster API), which Available says; any
   * NodeClaim left once the NodePools are gone (one without an owner the garbage collector
   * would follow) is deleted too, since nothing may outlive the Cluster.
   */
  async run(
    order: ReconcileOrder,
    conditions: ConditionSet,
    deletion?: { reason: string; message: string },
  ): Promise<Outcome> {
    this.deps.nodeClasses?.setTarget(undefined);
    // Disabling deletes what the fleet applied: none of it is drift any more.
    this.deps.drift?.retain([]);
    const kinds = this.provider.ownedKinds();
    const nodePoolKind = kinds.find((k) => k.kind === NODEPOOL.kind);
    const nodeClassKind = kinds.find((k) => k.kind === this.provider.nodeClass.kind);
    const step = (reason: string, message: string) => {
      conditions.set('Progressing', 'True', reason, message);
      conditions.set(
        'Available',
        'False',
        deletion?.reason ?? reason,
        deletion?.message ?? 'Karpenter is being disabled',
      );
      this.deps.onProgress?.(conditions.list());
      this.deps.log.info({ reason }, message);
    };
    // The Cluster Autoscaler first: the cluster is never without an autoscaler, so it is back
    // before Karpenter's capacity starts to go (whatever the mode: DISABLE would leave none).
    const cas = await this.clusterAutoscaler.whileDisabling(order, conditions);
    if (cas.failed) return { applied: 0, pruned: 0, requeue: true };
    let pruned = 0;
    try {
      const nodePools = nodePoolKind ? await this.owned.list(nodePoolKind) : [];
      if (nodePools.length > 0) {
        step(
          'DeletingNodePools',
          `deleting ${nodePools.length} NodePool(s): ${nodePools.map((o) => o.metadata.name).join(', ')}`,
        );
        pruned += await this.owned.deleteAll(nodePoolKind!, nodePools);
      }
      if (deletion) await this.owned.deleteRemainingNodeClaims();
      const nodeClaims = await this.owned.nodeClaimNames();
      if (nodeClaims.length > 0) {
        step(
          'WaitingForNodeClaims',
          `${nodeClaims.length} NodeClaim(s) still terminating (${nodeClaims.slice(0, 5).join(', ')}${nodeClaims.length > 5 ? ', ...' : ''}); the operand stays until Karpenter has removed them`,
        );
        return { applied: 0, pruned, requeue: true };
      }
      const nodeClasses = nodeClassKind ? await this.owned.list(nodeClassKind) : [];
      if (nodeClasses.length > 0) {
        step(
          'RemovingNodeClasses',
          `deleting ${nodeClasses.map((o) => describeObject(o)).join(', ')}`,
        );
        pruned += await this.owned.deleteAll(nodeClassKind!, nodeClasses);
        if ((await this.owned.list(nodeClassKind!)).length > 0)
          return { applied: 0, pruned, requeue: true };
      }
      const remaining = await this.owned.count();
      if (remaining > 0) {
        step(
          'RemovingOperand',
          `removing the operand and ${remaining} object(s) the fleet created`,
        );
        pruned += await this.owned.prune([]);
      }
    } catch (err) {
      return {
        ...degraded(this.deps.log, conditions, 'DisableFailed', describeKubeError(err)),
        pruned,
        requeue: true,
      };
    }
    conditions.set(
      'Degraded',
      'False',
      'AsExpected',
      'nothing of Karpenter is left on the cluster',
    );
    conditions.set(
      'Available',
      'True',
      'KarpenterDisabled',
      'Karpenter is not enabled on this cluster',
    );
    conditions.set('Progressing', 'False', 'AsExpected', `generation ${order.generation} applied`);
    return {
      applied: 0,
      pruned,
      requeue: false,
      ...(cas.state ? { clusterAutoscaler: cas.state } : {}),
    };
  }
}

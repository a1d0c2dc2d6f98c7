import { compareCodeUnits } from '@fleet/contracts';
import type {
  ClusterAutoscalerState,
  Condition,
  ReconcileOrder,
  ReportedMigrationProposal,
  StatusReport,
} from '@fleet/contracts';
import { customPoolOverlaps, type KubeObject } from '@fleet/cloud-provider';
import type { ClusterAutoscalerControl } from '../cluster-autoscaler/node-group-sizes.js';
import type { ClusterOperatorController } from '../cluster-operator/cluster-operator-controller.js';
import type { CsrApprover } from '../csr/csr-approver.js';
import type { DriftDetector } from '../drift/drift-detector.js';
import type { ClusterClient } from '../kube/cluster-client.js';
import type { ClusterWatches } from '../kube/cluster-watches.js';
import { karpenterPoolsCondition, machineConfigPoolStates } from '../machine-config/pool-status.js';
import { collectMetrics, nodeClaimSummaries } from '../metrics/cluster-metrics.js';
import type { NodeClassController } from '../nodeclass/nodeclass-controller.js';
import { ConditionSet } from '../reconcile/conditions.js';
import type { ReconcileResult } from '../reconcile/outcome.js';

/** The report body, without who sends it and when. */
export type StatusSnapshot = Omit<StatusReport, 'clusterId' | 'reportedAt'>;

/** The last pass's conditions with those observed since replacing theirs, sorted by type. */
export function withObserved(result: readonly Condition[], observed: ConditionSet): Condition[] {
  const types = new Set(observed.list().map((c) => c.type));
  return [...result.filter((c) => !types.has(c.type)), ...observed.list()].sort((a, b) =>
    compareCodeUnits(a.type, b.type),
  );
}

/** The Cluster Autoscaler as a report carries it: its state and the migration proposal. */
interface AutoscalerObservation {
  state: ClusterAutoscalerState | undefined;
  migration?: ReportedMigrationProposal;
}

export interface ClusterStatusSources {
  cluster: ClusterClient;
  watches: ClusterWatches;
  nodeClassLabel: string;
  operator?: ClusterOperatorController;
  nodeClasses: NodeClassController;
  approver: CsrApprover;
  clusterAutoscaler: ClusterAutoscalerControl;
  drift: DriftDetector;
}

/**
 * What a standalone or Cluster API sidecar reports between orders: the last pass's outcome with
 * what the watches observed since (operand, pools, drift, metrics, NodeClaims), from caches, so
 * a report at rest costs no request.
 */
export class ClusterStatus {
  /** Observed between passes; kept across reports so lastTransitionTime moves only on change. */
  private readonly observed = new ConditionSet();
  private autoscalerEpoch = 0;
  private autoscalerObservation?: { key: string; state: Promise<AutoscalerObservation> };

  constructor(private readonly sources: ClusterStatusSources) {}

  /** Something the Cluster Autoscaler observation reads changed: the next report looks again. */
  autoscalerChanged(): void {
    this.autoscalerEpoch++;
  }

  async snapshot(
    order: ReconcileOrder,
    last: { generation: number; result: ReconcileResult },
  ): Promise<StatusSnapshot> {
    const { watches, operator, drift, approver } = this.sources;
    const operand = operator?.operandState();
    if (operand)
      this.observed.set(
        'OperandReady',
        operand.status,
        operand.reason,
        operand.message || 'operand state',
      );
    const pools = watches.machineConfigPools
      ? machineConfigPoolStates(watches.machineConfigPools.items(), new Date())
      : undefined;
    if (pools) {
      // NodePools whose nodes one of the cluster's own pools would claim too (every pool is
      // watched, the fleet's and the cluster's).
      const overlaps = customPoolOverlaps(
        watches.nodePools.items() as KubeObject[],
        watches.machineConfigPools!.items() as KubeObject[],
        this.sources.nodeClassLabel,
      ).map((o) => ({
        nodeClass: o.nodeClass,
        reason: 'MachineConfigPoolOverlap' as const,
        message: o.message,
      }));
      const c = karpenterPoolsCondition(pools, [
        ...this.sources.nodeClasses.currentProblems(),
        ...overlaps,
      ]);
      this.observed.set('KarpenterPoolsDegraded', c.status, c.reason, c.message);
    }
    const drifted = drift.condition(order.spec.driftPolicy);
    this.observed.set('Drifted', drifted.status, drifted.reason, drifted.message);
    const [metrics, cas] = await Promise.all([
      collectMetrics(
        this.sources.cluster,
        {
          nodes: watches.nodes,
          nodePools: watches.nodePools,
          pendingPods: watches.pendingPods,
          nodeClaims: watches.nodeClaims,
        },
        approver.counts,
      ),
      this.observeClusterAutoscaler(order).catch((): AutoscalerObservation => ({
        state: last.result.clusterAutoscaler,
      })),
    ]);
    return {
      observedGeneration: last.generation,
      conditions: withObserved(last.result.conditions, this.observed),
      metrics,
      csrDecisions: approver.unsentDecisions(),
      ...(cas.state ? { clusterAutoscaler: cas.state } : {}),
      ...(cas.migration ? { migrationProposal: cas.migration } : {}),
      ...(pools ? { machineConfigPools: pools } : {}),
      // From the watch's cache, as the metrics: no request of its own.
      ...(watches.nodeClaims.synced
        ? { nodeClaims: nodeClaimSummaries(watches.nodeClaims.items()) }
        : {}),
      drift: drift.list(),
    };
  }

  /**
   * The Cluster Autoscaler as the last report saw it, unless something it reads changed since
   * (a watch event) or the order asks for another mode: at rest, no request.
   */
  private observeClusterAutoscaler(order: ReconcileOrder): Promise<AutoscalerObservation> {
    const { clusterAutoscalerMode: mode, enabled } = order.spec;
    const key = `${this.autoscalerEpoch}/${mode}/${enabled}`;
    if (this.autoscalerObservation?.key === key) return this.autoscalerObservation.state;
    const state = this.sources.clusterAutoscaler
      .observe(mode, enabled)
      .then((o) => ({ state: o.state, ...(o.migration ? { migration: o.migration } : {}) }));
    const observation = { key, state };
    this.autoscalerObservation = observation;
    state.catch(() => {
      if (this.autoscalerObservation === observation) this.autoscalerObservation = undefined;
    });
    return state;
  }
}

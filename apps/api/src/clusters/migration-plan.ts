import {
  ClusterAutoscalerState,
  ReportedMigrationProposal,
  type MigrationProposal,
} from '@fleet/contracts';
import type { MigrationPlan } from './models/migration-plan.model.js';

/** What the API keeps of the status for a plan: the stored proposal and the autoscaler state. */
export interface StoredMigration {
  migrationProposal: unknown;
  migrationProposalGeneration: number | null;
  clusterAutoscaler: unknown;
  lastReportAt: Date | null;
}

/**
 * The plan the sidecar last reported, or why there is none. The stored JSON is parsed again (it
 * was validated at the edge; a row written by an older release would fail here and read as
 * "no plan" with the reason rather than as an internal error).
 */
export function migrationPlanOf(
  status: StoredMigration | null,
):
  | { plan: MigrationPlan & { proposal: MigrationProposal }; reason: null }
  | { plan: null; reason: string } {
  if (!status?.lastReportAt) return { plan: null, reason: 'the sidecar has not reported yet' };
  const reported = ReportedMigrationProposal.safeParse(status.migrationProposal);
  if (
    status.migrationProposal != null &&
    reported.success &&
    status.migrationProposalGeneration != null
  ) {
    const { proposal, computedAt } = reported.data;
    return {
      plan: {
        proposal,
        nodePools: proposal.nodePools,
        nodeClassOverrides: proposal.nodeClassOverrides,
        nodeClassExplanations: proposal.nodeClassExplanations,
        notExpressible: proposal.notExpressible,
        explanations: proposal.explanations,
        computedAt: new Date(computedAt),
        observedGeneration: status.migrationProposalGeneration,
      },
      reason: null,
    };
  }
  const cas = ClusterAutoscalerState.safeParse(status.clusterAutoscaler);
  if (!cas.success)
    return { plan: null, reason: 'the sidecar has not reported the Cluster Autoscaler' };
  if (cas.data.mode === 'DISABLE')
    return {
      plan: null,
      reason: `the Cluster Autoscaler is not in play: mode DISABLE (observed ${cas.data.observed})`,
    };
  if (cas.data.observed !== 'Present')
    return {
      plan: null,
      reason: `the Cluster Autoscaler is not in play: ${cas.data.observed === 'Absent' ? 'the cluster has no ClusterAutoscaler' : 'the fleet removed it'}`,
    };
  return {
    plan: null,
    reason:
      'the sidecar reported no proposal (its platform proposes none yet, or it is older than migration plans)',
  };
}

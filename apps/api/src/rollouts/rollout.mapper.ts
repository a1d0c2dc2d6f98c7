import type { Prisma } from '@fleet/database';
import { toGlobalId } from '../common/global-id.js';
import {
  RolloutClusterState,
  RolloutState,
  RolloutWaveState,
  type Rollout,
  type RolloutClusterProgress,
  type RolloutCounts,
} from './models/rollout.model.js';

export type RolloutRow = Prisma.RolloutGetPayload<{ include: { waves: true; clusters: true } }>;

function counts(clusters: readonly { state: string }[]): RolloutCounts {
  const by = (state: RolloutClusterState) =>
    clusters.filter((c) => c.state === (state as string)).length;
  return {
    total: clusters.length,
    pending: by(RolloutClusterState.PENDING),
    applying: by(RolloutClusterState.APPLYING),
    healthy: by(RolloutClusterState.HEALTHY),
    failed: by(RolloutClusterState.FAILED),
    skipped: by(RolloutClusterState.SKIPPED),
  };
}

export function toRollout(row: RolloutRow): Rollout {
  const clusters: RolloutClusterProgress[] = row.clusters.map((c) => ({
    clusterId: toGlobalId('Cluster', c.clusterId),
    clusterUid: c.clusterId,
    clusterName: c.clusterName,
    wave: c.wave,
    state: c.state as RolloutClusterState,
    generation: c.generation,
    reason: c.reason,
    appliedAt: c.appliedAt,
    healthySince: c.healthySince,
    finishedAt: c.finishedAt,
  }));
  return {
    __typename: 'Rollout',
    id: toGlobalId('Rollout', row.id),
    uid: row.id,
    state: row.state as RolloutState,
    reason: row.reason,
    selector: row.selector,
    change: row.change,
    strategy: {
      waves: row.waveSteps,
      name: row.strategyName,
      minHealthySeconds: row.minHealthySeconds,
      maxFailures: row.maxFailures,
      waveTimeoutSeconds: row.waveTimeoutSeconds,
      maxNodeClaimLaunchFailures: row.maxNodeClaimLaunchFailures,
      maxPendingPodSeconds: row.maxPendingPodSeconds,
    },
    currentWave: row.currentWave,
    waitingStage: row.state === 'WAITING_APPROVAL' ? row.currentWave : null,
    counts: counts(clusters),
    waves: row.waves.map((w) => {
      const mine = clusters.filter((c) => c.wave === w.index);
      return {
        index: w.index,
        state: w.state as RolloutWaveState,
        counts: counts(mine),
        startedAt: w.startedAt,
        deadlineAt: w.deadlineAt,
        finishedAt: w.finishedAt,
        selector: w.selector,
        minHealthySeconds: w.minHealthySeconds ?? row.minHealthySeconds,
        pauseSeconds: w.pauseSeconds,
        approval: w.approval,
        resumeAt: w.resumeAt,
        approvedAt: w.approvedAt,
        approvedBy: w.approvedBy,
        clusters: mine,
      };
    }),
    planId: row.planId,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    finishedAt: row.finishedAt,
  };
}

export type ClusterState = 'Paused' | 'Stale' | 'Degraded' | 'Progressing' | 'In sync';

interface StateInput {
  inSync: boolean;
  karpenter: { paused: boolean };
  status: { stale: boolean; conditions: { type: string; status: string }[] };
}

/**
 * One word per cluster for the tables, in the order an SRE must act on: a paused cluster is not
 * reconciled at all, a stale one is not reporting (its conditions are old news), then health,
 * then whether the last change has been seen.
 */
export function clusterState(cluster: StateInput): ClusterState {
  if (cluster.karpenter.paused) return 'Paused';
  if (cluster.status.stale) return 'Stale';
  if (cluster.status.conditions.some((c) => c.type === 'Degraded' && c.status === 'True')) {
    return 'Degraded';
  }
  if (!cluster.inSync) return 'Progressing';
  return 'In sync';
}

export const STATE_COLOR: Record<ClusterState, 'grey' | 'orange' | 'red' | 'blue' | 'green'> = {
  Paused: 'grey',
  Stale: 'orange',
  Degraded: 'red',
  Progressing: 'blue',
  'In sync': 'green',
};

import { ClusterHealthState } from './models/cluster.model.js';

/**
 * A cluster's one health state (issue 47, point 3): the first that holds of paused, stale,
 * degraded, progressing, healthy. The same order as the SQL fleet_health_key the fleet summary
 * counts with (migration 20261205032500_fleet_health_state), which leaves stale to the API.
 */
export function clusterHealthState(c: {
  paused: boolean;
  stale: boolean;
  observedGeneration: number;
  generation: number;
  conditions: readonly { type: string; status: string }[];
}): ClusterHealthState {
  if (c.paused) return ClusterHealthState.PAUSED;
  if (c.stale) return ClusterHealthState.STALE;
  const holds = (type: string) => c.conditions.some((x) => x.type === type && x.status === 'True');
  if (holds('Degraded')) return ClusterHealthState.DEGRADED;
  if (c.observedGeneration !== c.generation || holds('Progressing')) {
    return ClusterHealthState.PROGRESSING;
  }
  return ClusterHealthState.HEALTHY;
}

/** What the rollout driver reads of a cluster's last report. */
export interface ReportedStatus {
  observedGeneration: number;
  conditions: readonly { type: string; status: string }[];
  lastReportAt: Date | null;
}

/**
 * - `healthy`: at (or past) the target generation, Available=True, Degraded not True, fresh;
 * - `degraded`: Degraded=True at (or past) the target generation: the change is at fault;
 * - `stale`: no report within the staleness threshold, whatever the generation;
 * - `waiting`: the change is not applied yet, or applied but not yet Available.
 * A cluster degraded at an older generation is `waiting`: it has not taken the change yet, and the
 * wave timeout decides if it never does.
 */
export type ClusterHealth = 'healthy' | 'degraded' | 'stale' | 'waiting';

export function evaluateHealth(
  status: ReportedStatus,
  targetGeneration: number,
  now: Date,
  staleAfterSeconds: number,
): ClusterHealth {
  if (
    !status.lastReportAt ||
    now.getTime() - status.lastReportAt.getTime() > staleAfterSeconds * 1000
  )
    return 'stale';
  if (status.observedGeneration < targetGeneration) return 'waiting';
  const is = (type: string) =>
    status.conditions.some((c) => c.type === type && c.status === 'True');
  if (is('Degraded')) return 'degraded';
  return is('Available') ? 'healthy' : 'waiting';
}

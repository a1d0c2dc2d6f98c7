import type { ClusterHealthState } from '../graphql/generated.js';

export type ClusterState = 'Paused' | 'Stale' | 'Degraded' | 'Progressing' | 'Healthy';

/**
 * The API's one health state per cluster (Cluster.healthState, issue 47) in the console's words:
 * paused, stale, degraded, progressing, healthy, the first that holds. The console never derives
 * it itself, so the Overview, the tables, kfleet and fleetSummary cannot disagree. Generation
 * sync ("applied generation 3 of 3") is a separate fact, shown beside it.
 */
export function clusterState(cluster: { healthState: ClusterHealthState }): ClusterState {
  return STATE_WORD[cluster.healthState];
}

const STATE_WORD: Record<ClusterHealthState, ClusterState> = {
  PAUSED: 'Paused',
  STALE: 'Stale',
  DEGRADED: 'Degraded',
  PROGRESSING: 'Progressing',
  HEALTHY: 'Healthy',
};

export const STATE_COLOR: Record<ClusterState, 'grey' | 'orange' | 'red' | 'blue' | 'green'> = {
  Paused: 'grey',
  Stale: 'orange',
  Degraded: 'red',
  Progressing: 'blue',
  Healthy: 'green',
};

/** "3 min ago", "in 2 h", "5 d ago": a relative time as an SRE reads a table. */
export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  const [value, unit] =
    abs < 60
      ? [abs, 's']
      : abs < 3600
        ? [Math.floor(abs / 60), 'min']
        : abs < 86_400
          ? [Math.floor(abs / 3600), 'h']
          : [Math.floor(abs / 86_400), 'd'];
  if (abs < 5) return 'just now';
  return seconds < 0 ? `${value} ${unit} ago` : `in ${value} ${unit}`;
}

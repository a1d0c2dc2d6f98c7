import type { FleetState } from '@fleet/observability';
import type pg from 'pg';

/** Every RolloutState (prisma/schema.prisma), so each has a series even at zero. */
/** Every RolloutState, so each has its series (0 included): docs/OBSERVABILITY.md promises it. */
export const ROLLOUT_STATES = [
  'RUNNING',
  'WAITING_APPROVAL',
  'PAUSED',
  'COMPLETED',
  'FAILED',
  'ABORTED',
] as const;

/**
 * The fleet's counts for the Prometheus gauges, in one round trip: a scrape every 30 s of 10,000
 * clusters reads each ClusterStatus's few conditions once. Conditions of a cluster that never
 * reported are not counted (it has none yet); `fleet_clusters` counts it.
 */
export async function readFleetState(pool: pg.Pool): Promise<FleetState> {
  const { rows } = await pool.query<{
    kind: 'cluster' | 'condition' | 'rollout';
    a: string;
    b: string | null;
    n: number;
  }>(
    `SELECT 'cluster' AS kind, topology::text AS a, platform::text AS b, count(*)::int AS n
       FROM "Cluster" GROUP BY topology, platform
     UNION ALL
     SELECT 'condition', c->>'type', c->>'status', count(*)::int
       FROM "ClusterStatus" s, jsonb_array_elements(s.conditions) c
      WHERE jsonb_typeof(s.conditions) = 'array'
      GROUP BY c->>'type', c->>'status'
     UNION ALL
     SELECT 'rollout', state::text, NULL, count(*)::int FROM "Rollout" GROUP BY state`,
  );
  const state: FleetState = {
    clusters: [],
    conditions: [],
    rollouts: Object.fromEntries(ROLLOUT_STATES.map((s) => [s, 0])),
  };
  for (const row of rows) {
    if (row.kind === 'cluster')
      state.clusters.push({ topology: row.a, platform: row.b ?? '', clusters: row.n });
    else if (row.kind === 'condition')
      state.conditions.push({ type: row.a, status: row.b ?? '', clusters: row.n });
    else state.rollouts[row.a] = row.n;
  }
  return state;
}

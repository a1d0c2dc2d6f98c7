import { createHash } from 'node:crypto';
import type pg from 'pg';

export const BENCH_REPORT_TOKEN = 'bench-report-token-0123456789abcdef';

/**
 * N clusters straight into PostgreSQL (registration through GraphQL would dominate the run):
 * desired generation `generation`, observed `observed`, one NodePool each, all sharing one report
 * token so a simulator can report for any of them.
 */
export async function seedClusters(
  sql: pg.Client,
  count: number,
  { generation = 2, observed = 1 } = {},
): Promise<string[]> {
  const hash = createHash('sha256').update(BENCH_REPORT_TOKEN).digest('hex');
  await sql.query(
    `INSERT INTO "Cluster" (id, name, topology, platform, region, labels, "reportTokenHash", "redisPasswordHash", "updatedAt")
     SELECT gen_random_uuid(), 'bench-' || lpad(i::text, 6, '0'), 'STANDALONE', 'AWS', 'us-east-1', '{}'::jsonb, $2, repeat('0', 64), now()
       FROM generate_series(1, $1) i`,
    [count, hash],
  );
  await sql.query(
    `INSERT INTO "DesiredState" ("clusterId", generation, enabled, "updatedAt") SELECT id, $1, true, now() FROM "Cluster"`,
    [generation],
  );
  await sql.query(
    `INSERT INTO "ClusterStatus" ("clusterId", "observedGeneration", conditions, "lastReportAt", "updatedAt")
     SELECT id, $1, '[]'::jsonb, now(), now() FROM "Cluster"`,
    [observed],
  );
  await sql.query(
    `INSERT INTO "NodePool" (id, "clusterId", name, spec, "updatedAt")
     SELECT gen_random_uuid(), id, 'general', '{"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"requirements":[]}},"limits":{"cpu":"64"}}'::jsonb, now()
       FROM "Cluster"`,
  );
  await sql.query('ANALYZE');
  const { rows } = await sql.query<{ id: string }>(`SELECT id FROM "Cluster" ORDER BY id`);
  return rows.map((r) => r.id);
}

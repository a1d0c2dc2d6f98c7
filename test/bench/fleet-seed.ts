import { createHash } from 'node:crypto';
import type pg from 'pg';

export const BENCH_REPORT_TOKEN = 'bench-report-token-0123456789abcdef';

/** The report token of the i-th seeded cluster (0-based, in the order seedClusters returns). */
export const benchReportToken = (i: number) => `${BENCH_REPORT_TOKEN}-${i + 1}`;

/**
 * N clusters straight into PostgreSQL (registration through GraphQL would dominate the run):
 * desired generation `generation`, observed `observed`, one NodePool each. All share one report
 * token so a simulator can report for any of them, or (`tokens: 'own'`) each has its own,
 * benchReportToken(i), as real sidecars do. Returned in name order.
 */
export async function seedClusters(
  sql: pg.Client,
  count: number,
  {
    generation = 2,
    observed = 1,
    tokens = 'shared',
  }: { generation?: number; observed?: number; tokens?: 'shared' | 'own' } = {},
): Promise<string[]> {
  const hash = createHash('sha256').update(BENCH_REPORT_TOKEN).digest('hex');
  await sql.query(
    `INSERT INTO "Cluster" (id, name, topology, platform, region, labels, "reportTokenHash", "redisPasswordHash", "updatedAt")
     SELECT gen_random_uuid(), 'bench-' || lpad(i::text, 6, '0'), 'STANDALONE', 'AWS', 'us-east-1', '{}'::jsonb,
            CASE WHEN $3 THEN encode(sha256(convert_to($4 || '-' || i, 'UTF8')), 'hex') ELSE $2 END,
            repeat('0', 64), now()
       FROM generate_series(1, $1) i`,
    [count, hash, tokens === 'own', BENCH_REPORT_TOKEN],
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
  // What the clusters set themselves, as the API would have recorded it (docs/PROFILES.md):
  // the effective columns above are then what their overrides compose to.
  await sql.query(
    `UPDATE "DesiredState" d SET overrides = jsonb_build_object('enabled', true, 'nodePools',
       (SELECT jsonb_object_agg(p.name, p.spec) FROM "NodePool" p WHERE p."clusterId" = d."clusterId"))`,
  );
  await sql.query('ANALYZE');
  const { rows } = await sql.query<{ id: string }>(`SELECT id FROM "Cluster" ORDER BY name`);
  return rows.map((r) => r.id);
}

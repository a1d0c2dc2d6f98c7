import type pg from 'pg';
import {
  BUILT_IN_OPERAND_DEFAULT,
  buildOrder,
  sidecarReads,
  type DesiredRow,
  type OperandDefault,
} from '../dispatch/order.js';
import type { SidecarQueues } from '../dispatch/sidecar-queues.js';

export interface ResyncResult {
  pending: number;
  pages: number;
}

/**
 * Re-derives every pending order from PostgreSQL (`generation > observedGeneration`) and puts it
 * on its cluster's queue: after a Redis flush or a lost reconcile job, the fleet heals by itself.
 * Orders already on their queues are not duplicated (job ID = generation). One keyset-paged query
 * and one multi-queue addBulk per page, so 10,000 clusters cost a few dozen round trips.
 */
export async function resyncPendingOrders(
  pool: pg.Pool,
  queues: SidecarQueues,
  {
    pageSize = 1000,
    operandDefault = BUILT_IN_OPERAND_DEFAULT,
  }: { pageSize?: number; operandDefault?: OperandDefault } = {},
): Promise<ResyncResult> {
  let after = '00000000-0000-0000-0000-000000000000';
  let pending = 0;
  let pages = 0;
  for (;;) {
    const { rows } = await pool.query<DesiredRow & { sidecarContractVersion: number | null }>(
      `SELECT d."clusterId", d.generation, c.platform::text, c.topology::text, d.enabled, d.paused,
              d."clusterAutoscalerMode"::text AS "clusterAutoscalerMode", d."logLevel"::text AS "logLevel",
              d."featureGates", d."nodeClassOverrides", s."sidecarContractVersion",
              d."karpenterVersion", d."operandImage", d."interruptionQueue", d."webIdentityRoleArn", d."allowedInstanceTypes",
              d."driftPolicy"::text AS "driftPolicy",
              COALESCE((SELECT jsonb_agg(jsonb_build_object('name', p.name, 'spec', p.spec) ORDER BY p.name)
                          FROM "NodePool" p WHERE p."clusterId" = d."clusterId"), '[]'::jsonb) AS "nodePools"
         FROM "DesiredState" d
         JOIN "ClusterStatus" s ON s."clusterId" = d."clusterId"
         JOIN "Cluster" c ON c.id = d."clusterId"
        WHERE d.generation > s."observedGeneration" AND d."clusterId" > $1::uuid
        ORDER BY d."clusterId"
        LIMIT $2`,
      [after, pageSize],
    );
    if (!rows.length) break;
    pages++;
    pending += rows.length;
    after = rows.at(-1)!.clusterId;
    // The dispatcher refused orders their sidecar cannot read (SidecarOutdated); so does the resync.
    const orders = rows
      .map((row) => buildOrder(row, operandDefault))
      .filter((o, i) => sidecarReads(rows[i]!.sidecarContractVersion, o));
    await queues.pushMany(orders);
    // The runs say what is on the queues: the current generation DISPATCHED (its first dispatch
    // time kept, so OrderNotTaken can tell how long it waits), older open ones SUPERSEDED.
    const pairs = JSON.stringify(
      orders.map((o) => ({ clusterId: o.clusterId, generation: o.generation })),
    );
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      // The clusters' status rows first, in id order, as the report batch writer takes them:
      // both then touch the runs only while holding those, and cannot deadlock on the runs.
      await client.query(
        `SELECT 1 FROM "ClusterStatus" WHERE "clusterId" = ANY($1::uuid[]) ORDER BY "clusterId" FOR UPDATE`,
        [orders.map((o) => o.clusterId)],
      );
      await client.query(
        `WITH pending AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x("clusterId" uuid, generation int)
       ), superseded AS (
         UPDATE "ReconcileRun" r SET state = 'SUPERSEDED', "finishedAt" = now()
           FROM pending p
          WHERE r."clusterId" = p."clusterId" AND r.generation < p.generation AND r.state IN ('QUEUED', 'DISPATCHED')
       )
       INSERT INTO "ReconcileRun" (id, "clusterId", generation, state, "dispatchedAt")
       SELECT gen_random_uuid(), "clusterId", generation, 'DISPATCHED', now() FROM pending
       ON CONFLICT ("clusterId", generation) DO UPDATE
          SET state = 'DISPATCHED', "dispatchedAt" = COALESCE("ReconcileRun"."dispatchedAt", now())
        WHERE "ReconcileRun".state = 'QUEUED'`,
        [pairs],
      );
      await client.query('COMMIT');
    } catch (err) {
      broken = true;
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release(broken);
    }
    if (rows.length < pageSize) break;
  }
  return { pending, pages };
}

import type { Condition } from '@fleet/contracts';
import type pg from 'pg';
import {
  conditionChanges,
  withCondition,
  type ConditionChange,
} from '../conditions/fleet-conditions.js';
import { insertTransitions } from '../ingest/report-batch-writer.js';

export interface SweepResult {
  stale: number;
  ordersNotTaken: number;
  /** Clusters whose conditions this sweep changed (their applied digest no longer stands). */
  changed: string[];
}

/**
 * Raises the fleet-side conditions a sidecar cannot report about itself: `Stale` when a cluster
 * sent nothing (not even a heartbeat) for too long, `OrderNotTaken` when an order has been
 * dispatched for too long without the cluster applying it. Reports clear them (see the ingest).
 */
export async function sweepStaleness(
  pool: pg.Pool,
  {
    staleAfterSeconds,
    orderNotTakenSeconds,
  }: { staleAfterSeconds: number; orderNotTakenSeconds: number },
): Promise<SweepResult> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const at = new Date().toISOString();
    // SKIP LOCKED: a cluster whose report is being written right now is not stale.
    const silent = await client.query<{
      clusterId: string;
      conditions: Condition[];
      lastReportAt: Date | null;
    }>(
      `SELECT "clusterId", conditions, "lastReportAt" FROM "ClusterStatus"
        WHERE COALESCE("lastReportAt", "updatedAt") < now() - make_interval(secs => $1)
          AND NOT conditions @> '[{"type": "Stale", "status": "True"}]'
        ORDER BY "clusterId" FOR UPDATE SKIP LOCKED`,
      [staleAfterSeconds],
    );
    const notTaken = await client.query<{
      clusterId: string;
      conditions: Condition[];
      generation: number;
      dispatchedAt: Date;
    }>(
      `SELECT s."clusterId", s.conditions, r.generation, r."dispatchedAt"
         FROM "ReconcileRun" r JOIN "ClusterStatus" s ON s."clusterId" = r."clusterId"
        WHERE r.state = 'DISPATCHED' AND r."dispatchedAt" < now() - make_interval(secs => $1)
          AND s."observedGeneration" < r.generation
          AND NOT s.conditions @> '[{"type": "OrderNotTaken", "status": "True"}]'
        ORDER BY s."clusterId" FOR UPDATE OF s SKIP LOCKED`,
      [orderNotTakenSeconds],
    );
    const updates = new Map<string, { before: Condition[]; after: Condition[] }>();
    for (const row of silent.rows) {
      const message = row.lastReportAt
        ? `no report since ${row.lastReportAt.toISOString()} (expected a heartbeat at least every ${Math.round(staleAfterSeconds)} s)`
        : 'no report since registration';
      updates.set(row.clusterId, {
        before: row.conditions,
        after: withCondition(
          row.conditions,
          { type: 'Stale', status: 'True', reason: 'NoRecentReports', message },
          at,
        ),
      });
    }
    for (const row of notTaken.rows) {
      const current = updates.get(row.clusterId)?.after ?? row.conditions;
      const message = `the order for generation ${row.generation} was dispatched at ${row.dispatchedAt.toISOString()} and is not applied yet`;
      updates.set(row.clusterId, {
        before: updates.get(row.clusterId)?.before ?? row.conditions,
        after: withCondition(
          current,
          { type: 'OrderNotTaken', status: 'True', reason: 'OrderPending', message },
          at,
        ),
      });
    }
    if (updates.size) {
      const transitions: (ConditionChange & { clusterId: string })[] = [];
      for (const [clusterId, { before, after }] of updates) {
        for (const t of conditionChanges(before, after, at)) transitions.push({ ...t, clusterId });
      }
      await client.query(
        `UPDATE "ClusterStatus" s SET conditions = u.conditions, "updatedAt" = now()
           FROM jsonb_to_recordset($1::jsonb) AS u("clusterId" uuid, conditions jsonb)
          WHERE s."clusterId" = u."clusterId"`,
        [
          JSON.stringify(
            [...updates].map(([clusterId, { after }]) => ({ clusterId, conditions: after })),
          ),
        ],
      );
      if (transitions.length) await insertTransitions(client, transitions);
    }
    if (notTaken.rows.length) {
      // The run says why it is still open; it stays DISPATCHED because the sidecar may yet take it.
      await client.query(
        `UPDATE "ReconcileRun" r SET error = 'order not taken within ' || $2 || ' s'
           FROM jsonb_to_recordset($1::jsonb) AS u("clusterId" uuid, generation int)
          WHERE r."clusterId" = u."clusterId" AND r.generation = u.generation AND r.state = 'DISPATCHED'`,
        [
          JSON.stringify(
            notTaken.rows.map((r) => ({ clusterId: r.clusterId, generation: r.generation })),
          ),
          String(orderNotTakenSeconds),
        ],
      );
    }
    await client.query('COMMIT');
    return {
      stale: silent.rows.length,
      ordersNotTaken: notTaken.rows.length,
      changed: [...updates.keys()],
    };
  } catch (err) {
    broken = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(broken);
  }
}

import type { Condition, IngestedStatusReport as StatusReport } from '@fleet/contracts';
import type pg from 'pg';
import {
  conditionChanges,
  conditionsAfterReport,
  type ConditionChange,
} from '../conditions/fleet-conditions.js';

export interface IngestResult {
  /** The report moved the cluster's status forward (it was not older than what is stored). */
  advanced: boolean;
  /**
   * It also changed what the status says, beyond when it was last heard from: false for a
   * report of the digest, generation and conditions already stored (see `unchanged`).
   */
  changed: boolean;
}

interface StoredStatus {
  clusterId: string;
  observedGeneration: number;
  conditions: Condition[];
  lastReportAt: Date | null;
  reportDigest: string | null;
}

/** When the API received the report: the fleet's clock, never the sidecar's (issue 17). */
const receivedAt = (report: StatusReport): string => report.receivedAt ?? report.reportedAt;

const conditionTrue = (report: StatusReport, type: string) =>
  report.conditions.some((c) => c.type === type && c.status === 'True');

/** Field by field: stored conditions come back from jsonb with their keys in another order. */
const sameConditions = (a: readonly Condition[], b: readonly Condition[]) =>
  a.length === b.length &&
  a.every(
    (c, i) =>
      c.type === b[i]!.type &&
      c.status === b[i]!.status &&
      c.reason === b[i]!.reason &&
      c.message === b[i]!.message &&
      c.lastTransitionTime === b[i]!.lastTransitionTime,
  );

/**
 * A report that says again what the status holds (issue 48, target 1, "fewer rows per report"):
 * the sidecar's digest covers everything it reports but `reportedAt`, so the same digest at the
 * same generation is the same content; the conditions are compared too, since the fleet's own
 * (Stale, OrderNotTaken, SidecarOutdated) change beside the report. Most full reports are such,
 * the sidecar's at-rest report every five minutes: for those only `lastReportAt` is written, not
 * the row's jsonb columns again (each write a new row version and its TOAST values).
 */
const unchanged = (status: StoredStatus, report: StatusReport, conditions: Condition[]) =>
  report.digest !== undefined &&
  report.digest === status.reportDigest &&
  report.observedGeneration === status.observedGeneration &&
  sameConditions(conditions, status.conditions);

/**
 * Writes many reports in one transaction of two statements whatever the batch size: the rows
 * locked and read, then every write, set-based, in one statement. Every write is idempotent for
 * a re-sent report (the health sample is keyed by cluster and report time, status only moves
 * forward, a condition change is recorded only when status or reason differs from what is
 * stored, CSR decisions have a natural key), so a batch retried after a crash between commit and
 * job completion records nothing twice.
 */
export async function writeReportBatch(
  pool: pg.Pool,
  reports: readonly StatusReport[],
): Promise<IngestResult[]> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const ids = [...new Set(reports.map((r) => r.clusterId))].sort();
    // Locks in a fixed order: two batches sharing clusters wait for each other, never deadlock.
    const { rows } = await client.query<StoredStatus>(
      `SELECT "clusterId", "observedGeneration", conditions, "lastReportAt", "reportDigest"
         FROM "ClusterStatus" WHERE "clusterId" = ANY($1::uuid[]) ORDER BY "clusterId" FOR UPDATE`,
      [ids],
    );
    const current = new Map(rows.map((r) => [r.clusterId, r]));
    const results: IngestResult[] = reports.map(() => ({ advanced: false, changed: false }));
    const changed = new Map<string, { status: StoredStatus; report: StatusReport }>();
    /** Clusters whose reports here all changed nothing: their lastReportAt only. */
    const heardFrom = new Map<string, StatusReport>();
    const transitions: Transition[] = [];

    // Oldest first, so several reports of one cluster in a batch apply in the order they were made.
    const order = reports
      .map((report, index) => ({ report, index }))
      .sort(
        (a, b) =>
          a.report.observedGeneration - b.report.observedGeneration ||
          receivedAt(a.report).localeCompare(receivedAt(b.report)),
      );
    for (const { report, index } of order) {
      const status = current.get(report.clusterId);
      if (!status) continue; // deregistered meanwhile: nothing to record
      const at = new Date(receivedAt(report));
      const forward =
        report.observedGeneration > status.observedGeneration ||
        (report.observedGeneration === status.observedGeneration &&
          (!status.lastReportAt || status.lastReportAt <= at));
      if (!forward) continue;
      const conditions = conditionsAfterReport(status.conditions, report.conditions, {
        at: receivedAt(report),
        advancedGeneration: report.observedGeneration > status.observedGeneration,
        contractVersion: report.sidecar?.contractVersion ?? 1,
      });
      const next = {
        clusterId: report.clusterId,
        observedGeneration: report.observedGeneration,
        conditions,
        lastReportAt: at,
        reportDigest: report.digest ?? null,
      };
      current.set(report.clusterId, next);
      // Once a report of the batch changed the cluster, its row is written whole from the
      // newest one anyway.
      if (!changed.has(report.clusterId) && unchanged(status, report, conditions)) {
        heardFrom.set(report.clusterId, report);
        results[index] = { advanced: true, changed: false };
        continue;
      }
      for (const t of conditionChanges(status.conditions, conditions, receivedAt(report)))
        transitions.push({ ...t, clusterId: report.clusterId });
      heardFrom.delete(report.clusterId);
      changed.set(report.clusterId, { status: next, report });
      results[index] = { advanced: true, changed: true };
    }

    const known = reports.filter((r) => current.has(r.clusterId));
    /** Each write of the batch: its statement (one parameter, $1) and that parameter. */
    const writes: [sql: string, param: string][] = [];
    if (changed.size) {
      writes.push([
        `UPDATE "ClusterStatus" s
            SET "observedGeneration" = u."observedGeneration", conditions = u.conditions, metrics = u.metrics,
                "lastReportAt" = u."lastReportAt", "clusterAutoscaler" = COALESCE(u."clusterAutoscaler", s."clusterAutoscaler"),
                "machineConfigPools" = u."machineConfigPools", "nodeClaims" = u."nodeClaims", drift = u.drift, drifted = u.drifted,
                "sidecarVersion" = u."sidecarVersion", "sidecarContractVersion" = u."sidecarContractVersion",
                "reportDigest" = u."reportDigest",
                "migrationProposal" = CASE WHEN u."clusterAutoscaler" IS NULL THEN s."migrationProposal" ELSE u."migrationProposal" END,
                "migrationProposalGeneration" = CASE WHEN u."clusterAutoscaler" IS NULL THEN s."migrationProposalGeneration"
                                                     WHEN u."migrationProposal" IS NULL THEN NULL ELSE u."observedGeneration" END,
                "updatedAt" = now()
           FROM jsonb_to_recordset($1::jsonb) AS u("clusterId" uuid, "observedGeneration" int, conditions jsonb,
                metrics jsonb, "lastReportAt" timestamptz, "clusterAutoscaler" jsonb, "machineConfigPools" jsonb,
                "nodeClaims" jsonb, drift jsonb, drifted boolean, "sidecarVersion" text, "sidecarContractVersion" int,
                "migrationProposal" jsonb, "reportDigest" text)
          WHERE s."clusterId" = u."clusterId"`,
        JSON.stringify(
          [...changed.values()].map(({ status, report }) => ({
            clusterId: status.clusterId,
            observedGeneration: status.observedGeneration,
            conditions: status.conditions,
            metrics: report.metrics,
            lastReportAt: receivedAt(report),
            clusterAutoscaler: report.clusterAutoscaler ?? null,
            // Absent where the platform has no pools: the status says so too.
            machineConfigPools: report.machineConfigPools ?? null,
            // Absent from older sidecars: the status says nothing about NodeClaims either.
            nodeClaims: report.nodeClaims ?? null,
            // Absent from sidecars that do not watch for drift: the status says nothing either.
            drift: report.drift ?? null,
            drifted: conditionTrue(report, 'Drifted'),
            // A report without `sidecar` comes from a contract-1 sidecar.
            sidecarVersion: report.sidecar?.version ?? null,
            sidecarContractVersion: report.sidecar?.contractVersion ?? 1,
            // With the Cluster Autoscaler observed and no proposal, it is not in play (or the
            // sidecar proposes nothing): the stored one goes. A report without the Cluster
            // Autoscaler's state says nothing about it and keeps what is stored.
            migrationProposal: report.migrationProposal ?? null,
            reportDigest: report.digest ?? null,
          })),
        ),
      ]);
    }
    if (heardFrom.size) {
      writes.push([
        `UPDATE "ClusterStatus" s SET "lastReportAt" = u.at
           FROM jsonb_to_recordset($1::jsonb) AS u(id uuid, at timestamptz) WHERE s."clusterId" = u.id`,
        JSON.stringify(
          [...heardFrom.values()].map((r) => ({ id: r.clusterId, at: receivedAt(r) })),
        ),
      ]);
    }
    const applied = [...[...changed.values()].map(({ report }) => report), ...heardFrom.values()];
    if (applied.length) {
      // The run of the reported generation is APPLIED, or FAILED while the cluster reports
      // Degraded for it; older open runs are SUPERSEDED.
      writes.push([
        `UPDATE "ReconcileRun" r
          SET state = (CASE WHEN r.generation < u.generation THEN 'SUPERSEDED'
                            WHEN u.degraded THEN 'FAILED' ELSE 'APPLIED' END)::"ReconcileRunState",
              "finishedAt" = u.at,
              error = CASE WHEN r.generation = u.generation AND u.degraded THEN u.message
                           WHEN r.generation = u.generation THEN NULL ELSE r.error END
         FROM jsonb_to_recordset($1::jsonb) AS u("clusterId" uuid, generation int, degraded boolean, message text, at timestamptz)
        WHERE r."clusterId" = u."clusterId"
          AND ((r.generation = u.generation AND r.state IN ('QUEUED', 'DISPATCHED', 'FAILED')
                AND NOT (r.state = 'FAILED' AND u.degraded))
               OR (r.generation < u.generation AND r.state IN ('QUEUED', 'DISPATCHED')))`,
        JSON.stringify(
          applied.map((report) => ({
            clusterId: report.clusterId,
            generation: report.observedGeneration,
            degraded: conditionTrue(report, 'Degraded'),
            message: report.conditions.find((c) => c.type === 'Degraded')?.message ?? null,
            at: receivedAt(report),
          })),
        ),
      ]);
    }
    if (known.length) {
      writes.push([
        `INSERT INTO "HealthSample" ("clusterId", "observedAt", "observedGeneration", available, degraded, progressing, metrics, "machineConfigPools")
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS h("clusterId" uuid, "observedAt" timestamptz, "observedGeneration" int,
                available boolean, degraded boolean, progressing boolean, metrics jsonb, "machineConfigPools" jsonb)
         ON CONFLICT DO NOTHING`,
        JSON.stringify(
          known.map((r) => ({
            clusterId: r.clusterId,
            observedAt: receivedAt(r),
            observedGeneration: r.observedGeneration,
            available: conditionTrue(r, 'Available'),
            degraded: conditionTrue(r, 'Degraded'),
            progressing: conditionTrue(r, 'Progressing'),
            metrics: r.metrics,
            machineConfigPools: r.machineConfigPools ?? null,
          })),
        ),
      ]);
    }
    if (transitions.length) writes.push([TRANSITIONS_SQL, transitionsParam(transitions)]);
    const decisions = known.flatMap((r) =>
      r.csrDecisions.map((d) => ({ ...d, clusterId: r.clusterId })),
    );
    if (decisions.length) {
      // Decisions are facts whatever the order of reports; the unique key drops re-sent ones.
      writes.push([
        `INSERT INTO "CsrDecision" ("clusterId", "csrName", "nodeName", "signerName", decision, reason, message, "decidedAt")
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS d("clusterId" uuid, "csrName" text, "nodeName" text, "signerName" text,
                decision text, reason text, message text, "decidedAt" timestamptz)
         ON CONFLICT DO NOTHING`,
        JSON.stringify(decisions),
      ]);
    }
    if (writes.length) {
      // One statement for every write of the batch (each a data-modifying WITH, executed once and
      // to completion whether read or not): a round trip to PostgreSQL costs more CPU, on both
      // sides, than a statement's work for a few dozen reports. The two ClusterStatus writes
      // touch different clusters (a changed cluster leaves heardFrom), as one statement needs.
      await client.query(
        `WITH ${writes.map(([sql], i) => `w${i} AS (${sql.replaceAll('$1', `$${i + 1}`)})`).join(', ')} SELECT 1`,
        writes.map(([, param]) => param),
      );
    }
    await client.query('COMMIT');
    return results;
  } catch (err) {
    broken = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    // A connection that failed mid-transaction (e.g. its backend was terminated) is not reused.
    client.release(broken);
  }
}

const TRANSITIONS_SQL = `INSERT INTO "ConditionTransition" ("clusterId", type, "fromStatus", "fromReason", "toStatus", "toReason", message, at)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS t("clusterId" uuid, type text, "fromStatus" text, "fromReason" text,
            "toStatus" text, "toReason" text, message text, at timestamptz)`;

type Transition = ConditionChange & { clusterId: string };

const transitionsParam = (transitions: readonly Transition[]) =>
  JSON.stringify(transitions.map((t) => ({ ...t, message: t.message.slice(0, 4096) })));

export async function insertTransitions(
  client: pg.ClientBase,
  transitions: readonly Transition[],
): Promise<void> {
  await client.query(TRANSITIONS_SQL, [transitionsParam(transitions)]);
}

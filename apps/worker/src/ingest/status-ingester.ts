import type { StatusReport } from '@fleet/contracts';
import type { PrismaClient } from '@fleet/database';

const conditionTrue = (report: StatusReport, type: string) =>
  report.conditions.some((c) => c.type === type && c.status === 'True');

/**
 * Records a sidecar report: current status (only ever forward: a newer generation, or the same
 * generation reported later), one health sample (keyed by cluster and report time, so a retried
 * job records it once), and the reconcile runs the report proves applied.
 */
export class StatusIngester {
  constructor(private readonly db: PrismaClient) {}

  async ingest(report: StatusReport): Promise<{ advanced: boolean }> {
    const reportedAt = new Date(report.reportedAt);
    const [advanced] = await this.db.$transaction([
      this.db.$executeRaw`
        UPDATE "ClusterStatus"
           SET "observedGeneration" = ${report.observedGeneration},
               "conditions" = ${JSON.stringify(report.conditions)}::jsonb,
               "metrics" = ${JSON.stringify(report.metrics)}::jsonb,
               "lastReportAt" = ${reportedAt},
               "clusterAutoscaler" = COALESCE(${report.clusterAutoscaler ? JSON.stringify(report.clusterAutoscaler) : null}::jsonb, "clusterAutoscaler"),
               "updatedAt" = now()
         WHERE "clusterId" = ${report.clusterId}::uuid
           AND ("observedGeneration" < ${report.observedGeneration}
                OR ("observedGeneration" = ${report.observedGeneration}
                    AND ("lastReportAt" IS NULL OR "lastReportAt" <= ${reportedAt})))`,
      this.db.$executeRaw`
        INSERT INTO "HealthSample" ("clusterId", "observedAt", "observedGeneration", "available", "degraded", "progressing", "metrics")
        SELECT ${report.clusterId}::uuid, ${reportedAt}, ${report.observedGeneration},
               ${conditionTrue(report, 'Available')}, ${conditionTrue(report, 'Degraded')},
               ${conditionTrue(report, 'Progressing')}, ${JSON.stringify(report.metrics)}::jsonb
         WHERE EXISTS (SELECT 1 FROM "Cluster" WHERE id = ${report.clusterId}::uuid)
        ON CONFLICT DO NOTHING`,
      // Decisions are facts whatever the order of reports; the unique key drops re-sent ones.
      this.db.$executeRaw`
        INSERT INTO "CsrDecision" ("clusterId", "csrName", "nodeName", "signerName", "decision", "reason", "message", "decidedAt")
        SELECT ${report.clusterId}::uuid, d."csrName", d."nodeName", d."signerName", d.decision, d.reason, d.message, d."decidedAt"
          FROM jsonb_to_recordset(${JSON.stringify(report.csrDecisions)}::jsonb)
               AS d("csrName" text, "nodeName" text, "signerName" text, decision text, reason text, message text, "decidedAt" timestamptz)
         WHERE EXISTS (SELECT 1 FROM "Cluster" WHERE id = ${report.clusterId}::uuid)
        ON CONFLICT DO NOTHING`,
      this.db.reconcileRun.updateMany({
        where: {
          clusterId: report.clusterId,
          generation: report.observedGeneration,
          state: { in: ['QUEUED', 'DISPATCHED'] },
        },
        data: { state: 'APPLIED', finishedAt: reportedAt },
      }),
      this.db.reconcileRun.updateMany({
        where: {
          clusterId: report.clusterId,
          generation: { lt: report.observedGeneration },
          state: { in: ['QUEUED', 'DISPATCHED'] },
        },
        data: { state: 'SUPERSEDED', finishedAt: reportedAt },
      }),
    ]);
    return { advanced: advanced > 0 };
  }
}

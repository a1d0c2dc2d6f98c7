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

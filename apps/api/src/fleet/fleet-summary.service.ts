import { Inject, Injectable } from '@nestjs/common';
import { Prisma } from '@fleet/database';
import type { Principal } from '../auth/principal.js';
import { labelSelectorSql } from '../clusters/cluster-query.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import type { FleetSummary } from './fleet-summary.model.js';

@Injectable()
export class FleetSummaryService {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  async summary(principal: Principal): Promise<FleetSummary> {
    const db = this.prisma.client;
    const scope = principal.scope ? labelSelectorSql(principal.scope) : [];
    const where = scope.length ? Prisma.sql`WHERE ${Prisma.join(scope, ' AND ')}` : Prisma.empty;
    const from = Prisma.sql`"Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id JOIN "ClusterStatus" s ON s."clusterId" = c.id`;
    const staleAfter = this.config.STALE_AFTER_SECONDS;
    // One scan for every count (grouping sets), one for the conditions inside the JSON.
    const [groups, conditions, sidecarVersions] = await Promise.all([
      db.$queryRaw<
        {
          platform: string | null;
          topology: string | null;
          g: number;
          clusters: number;
          inSync: number;
          stale: number;
          enabled: number;
          casDisabled: number;
          paused: number;
        }[]
      >`
        SELECT c.platform::text AS platform, c.topology::text AS topology,
               GROUPING(c.platform, c.topology)::int AS g,
               count(*)::int AS clusters,
               (count(*) FILTER (WHERE s."observedGeneration" = d.generation))::int AS "inSync",
               (count(*) FILTER (WHERE s."lastReportAt" IS NULL OR s."lastReportAt" < now() - make_interval(secs => ${staleAfter})))::int AS stale,
               (count(*) FILTER (WHERE d.enabled))::int AS enabled,
               (count(*) FILTER (WHERE d."clusterAutoscalerMode" = 'DISABLE'))::int AS "casDisabled",
               (count(*) FILTER (WHERE d.paused))::int AS paused
          FROM ${from} ${where}
         GROUP BY GROUPING SETS ((), (c.platform), (c.topology))`,
      db.$queryRaw<{ type: string; status: string; reason: string; count: number }[]>`
        SELECT cond->>'type' AS type, cond->>'status' AS status, cond->>'reason' AS reason, count(*)::int AS count
          FROM ${from} CROSS JOIN LATERAL jsonb_array_elements(s.conditions) cond ${where}
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      db.$queryRaw<{ value: string; count: number }[]>`
        SELECT COALESCE(s."sidecarVersion", 'unreported') AS value, count(*)::int AS count
          FROM ${from} ${where}
         GROUP BY 1 ORDER BY 1`,
    ]);
    const totals = groups.find((r) => r.g === 3) ?? {
      clusters: 0,
      inSync: 0,
      stale: 0,
      enabled: 0,
      casDisabled: 0,
      paused: 0,
    };
    const platforms = groups
      .filter((r) => r.g === 1 && r.platform !== null)
      .map((r) => ({ value: r.platform!, count: r.clusters }))
      .sort((a, b) => a.value.localeCompare(b.value));
    const topologies = groups
      .filter((r) => r.g === 2 && r.topology !== null)
      .map((r) => ({ value: r.topology!, count: r.clusters }))
      .sort((a, b) => a.value.localeCompare(b.value));
    return {
      clusters: totals.clusters,
      inSync: totals.inSync,
      stale: totals.stale,
      karpenterEnabled: totals.enabled,
      clusterAutoscalerDisabled: totals.casDisabled,
      paused: totals.paused,
      byPlatform: platforms,
      byTopology: topologies,
      // The sidecar's HostedMode condition is one per cluster and True with the mode as its
      // reason, so the condition counts already hold the breakdown.
      byHostedMode: conditions
        .filter((c) => c.type === 'HostedMode' && c.status === 'True')
        .map((c) => ({ value: c.reason, count: c.count })),
      bySidecarVersion: sidecarVersions,
      byCondition: conditions,
    };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { Prisma } from '@fleet/database';
import type { Principal } from '../auth/principal.js';
import { labelSelectorSql } from '../clusters/cluster-query.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import type { FleetSummary } from './fleet-summary.model.js';
import { maintainedCountsSql, SUMMARY_SEP as SEP } from './maintained-counts.js';
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

@Injectable()
export class FleetSummaryService {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  /**
   * The summary over the clusters `principal` may see. An unscoped caller's comes from the counts
   * maintained in PostgreSQL (`maintained`); a scoped caller's scans its scope (`scan`): the
   * counts are kept for the whole fleet only.
   */
  async summary(principal: Principal): Promise<FleetSummary> {
    return principal.scope ? this.scan(principal) : this.maintained();
  }

  /**
   * One statement, so one snapshot (issue 19: fleetSummary at 100,000 clusters): the maintained
   * counts (maintainedCountsSql), and Stale counted live from the lastReportAt index (it moves
   * with the clock, not with a write).
   */
  private async maintained(): Promise<FleetSummary> {
    const staleAfter = this.config.STALE_AFTER_SECONDS;
    const rows = await this.prisma.client.$queryRaw<{ key: string; count: number }[]>`
      ${maintainedCountsSql()}
      UNION ALL
      -- Every status row has its cluster and desired state (registered together, deleted together).
      SELECT 'stale', count(*)::int FROM "ClusterStatus" s
       WHERE s."lastReportAt" IS NULL OR s."lastReportAt" < now() - make_interval(secs => ${staleAfter})
      UNION ALL
      -- The stale clusters by the health key they are counted under (stale moves with the clock,
      -- so the maintained keys leave it out); usually few, found by the lastReportAt index.
      SELECT 'staleHealth' || chr(31) || fleet_health_key(d.paused, s."observedGeneration", d.generation, s.conditions), count(*)::int
        FROM "ClusterStatus" s JOIN "DesiredState" d ON d."clusterId" = s."clusterId"
       WHERE s."lastReportAt" IS NULL OR s."lastReportAt" < now() - make_interval(secs => ${staleAfter})
       GROUP BY 1`;
    const count = (key: string) => rows.find((r) => r.key === key)?.count ?? 0;
    const values = (dimension: string) =>
      rows
        .filter((r) => r.key.startsWith(`${dimension}${SEP}`))
        .map((r) => ({ value: r.key.slice(dimension.length + 1), count: r.count }));
    const byCondition = rows
      .filter((r) => r.key.startsWith(`condition${SEP}`))
      .map((r) => {
        const [, type = '', status = '', reason = ''] = r.key.split(SEP);
        return { type, status, reason, count: r.count };
      })
      // As PostgreSQL orders them (C collation: code points).
      .sort(
        (a, b) =>
          byCodePoint(a.type, b.type) ||
          byCodePoint(a.status, b.status) ||
          byCodePoint(a.reason, b.reason),
      );
    const health = (state: string) => count(`health${SEP}${state}`);
    const staleAs = (state: string) => count(`staleHealth${SEP}${state}`);
    return {
      clusters: count('clusters'),
      inSync: count('inSync'),
      byHealth: {
        healthy: health('healthy') - staleAs('healthy'),
        progressing: health('progressing') - staleAs('progressing'),
        degraded: health('degraded') - staleAs('degraded'),
        stale: staleAs('healthy') + staleAs('progressing') + staleAs('degraded'),
        paused: health('paused'),
      },
      stale: count('stale'),
      karpenterEnabled: count('enabled'),
      clusterAutoscalerDisabled: count('casDisabled'),
      paused: count('paused'),
      byPlatform: values('platform').sort((a, b) => a.value.localeCompare(b.value)),
      byTopology: values('topology').sort((a, b) => a.value.localeCompare(b.value)),
      byHostedMode: byCondition
        .filter((c) => c.type === 'HostedMode' && c.status === 'True')
        .map((c) => ({ value: c.reason, count: c.count })),
      bySidecarVersion: values('sidecarVersion').sort((a, b) => byCodePoint(a.value, b.value)),
      byCondition,
    };
  }

  /** Counts by scanning the clusters in the caller's scope (and the reference for the above). */
  async scan(principal: Principal): Promise<FleetSummary> {
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
          healthy: number;
          progressing: number;
          degraded: number;
          staleHealth: number;
        }[]
      >`
        SELECT c.platform::text AS platform, c.topology::text AS topology,
               GROUPING(c.platform, c.topology)::int AS g,
               count(*)::int AS clusters,
               (count(*) FILTER (WHERE s."observedGeneration" = d.generation))::int AS "inSync",
               (count(*) FILTER (WHERE s."lastReportAt" IS NULL OR s."lastReportAt" < now() - make_interval(secs => ${staleAfter})))::int AS stale,
               (count(*) FILTER (WHERE d.enabled))::int AS enabled,
               (count(*) FILTER (WHERE d."clusterAutoscalerMode" = 'DISABLE'))::int AS "casDisabled",
               (count(*) FILTER (WHERE d.paused))::int AS paused,
               (count(*) FILTER (WHERE h.state = 'healthy'))::int AS healthy,
               (count(*) FILTER (WHERE h.state = 'progressing'))::int AS progressing,
               (count(*) FILTER (WHERE h.state = 'degraded'))::int AS degraded,
               (count(*) FILTER (WHERE h.state = 'stale'))::int AS "staleHealth"
          FROM ${from}
          CROSS JOIN LATERAL (SELECT CASE
            WHEN NOT d.paused AND (s."lastReportAt" IS NULL OR s."lastReportAt" < now() - make_interval(secs => ${staleAfter})) THEN 'stale'
            ELSE fleet_health_key(d.paused, s."observedGeneration", d.generation, s.conditions) END AS state) h
          ${where}
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
      healthy: 0,
      progressing: 0,
      degraded: 0,
      staleHealth: 0,
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
      byHealth: {
        healthy: totals.healthy,
        progressing: totals.progressing,
        degraded: totals.degraded,
        stale: totals.staleHealth,
        paused: totals.paused,
      },
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

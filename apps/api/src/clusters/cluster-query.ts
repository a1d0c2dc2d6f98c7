import {
  LabelSelectorError,
  dns1123Subdomain,
  parseLabelSelector,
  type LabelRequirement,
} from '@fleet/contracts';
import { Prisma } from '@fleet/database';
import { userInputError } from '../common/errors.js';
import { SUMMARY_SEP } from '../fleet/maintained-counts.js';
import type { Principal } from '../auth/principal.js';
import type { ClusterView } from './cluster.mapper.js';
import {
  ClusterOrderField,
  OrderDirection,
  type ClusterFilter,
  type ClusterOrder,
} from './dto/cluster.inputs.js';

/**
 * The cluster list in SQL: filters, the caller's scope, keyset pagination. Only the page's IDs
 * come back from here; the page itself is loaded with its relations in one more query, so a
 * list never scans history and never issues a query per cluster.
 */
export function labelSelectorSql(requirements: readonly LabelRequirement[]): Prisma.Sql[] {
  return requirements.map((r) => {
    const has = Prisma.sql`c.labels ? ${r.key}`;
    switch (r.operator) {
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return Prisma.sql`NOT (${has})`;
      // Containment (@>) so the GIN index on labels serves equality and set membership.
      case 'In':
        return Prisma.sql`(${Prisma.join(
          r.values.map((v) => Prisma.sql`c.labels @> ${JSON.stringify({ [r.key]: v })}::jsonb`),
          ' OR ',
        )})`;
      case 'NotIn':
        return Prisma.sql`NOT (${Prisma.join(
          r.values.map((v) => Prisma.sql`c.labels @> ${JSON.stringify({ [r.key]: v })}::jsonb`),
          ' OR ',
        )})`;
    }
  });
}

export function parseSelectorInput(selector: string, field: string): LabelRequirement[] {
  try {
    return parseLabelSelector(selector);
  } catch (err) {
    if (err instanceof LabelSelectorError) throw userInputError(field, err.message);
    throw err;
  }
}

export function clusterWhere(
  filter: ClusterFilter | null | undefined,
  principal: Principal,
  staleAfterSeconds: number,
): Prisma.Sql {
  const conds: Prisma.Sql[] = [Prisma.sql`TRUE`];
  if (principal.scope) conds.push(...labelSelectorSql(principal.scope));
  if (filter?.platform) conds.push(Prisma.sql`c.platform = ${filter.platform}::"Platform"`);
  if (filter?.topology) conds.push(Prisma.sql`c.topology = ${filter.topology}::"Topology"`);
  if (filter?.labelSelector)
    conds.push(
      ...labelSelectorSql(parseSelectorInput(filter.labelSelector, 'filter.labelSelector')),
    );
  if (filter?.karpenterEnabled != null)
    conds.push(Prisma.sql`d.enabled = ${filter.karpenterEnabled}`);
  if (filter?.inSync != null) {
    conds.push(
      filter.inSync
        ? Prisma.sql`s."observedGeneration" = d.generation`
        : Prisma.sql`s."observedGeneration" <> d.generation`,
    );
  }
  if (filter?.stale != null) {
    const stale = Prisma.sql`(s."lastReportAt" IS NULL OR s."lastReportAt" < now() - make_interval(secs => ${staleAfterSeconds}))`;
    conds.push(filter.stale ? stale : Prisma.sql`NOT ${stale}`);
  }
  if (filter?.drifted != null)
    conds.push(filter.drifted ? Prisma.sql`s.drifted` : Prisma.sql`NOT s.drifted`);
  if (filter?.condition) {
    const match: Record<string, string> = { type: filter.condition.type };
    if (filter.condition.status) match.status = filter.condition.status;
    if (filter.condition.reason) match.reason = filter.condition.reason;
    conds.push(Prisma.sql`s.conditions @> ${JSON.stringify([match])}::jsonb`);
  }
  if (filter?.nameContains) {
    if (filter.nameContains.length > 63)
      throw userInputError('filter.nameContains', 'must be no more than 63 characters');
    conds.push(Prisma.sql`strpos(c.name, ${filter.nameContains}) > 0`);
  }
  if (filter?.managementCluster != null) {
    const name = dns1123Subdomain.safeParse(filter.managementCluster);
    if (!name.success)
      throw userInputError(
        'filter.managementCluster',
        name.error.issues[0]?.message ?? 'must be a DNS-1123 subdomain',
      );
    conds.push(Prisma.sql`c."managementCluster" = ${name.data}`);
  }
  return Prisma.join(conds, ' AND ');
}

const FROM = Prisma.sql`"Cluster" c JOIN "DesiredState" d ON d."clusterId" = c.id JOIN "ClusterStatus" s ON s."clusterId" = c.id`;

/** The sort key of each order field, with NULLs made sortable so keyset comparison works. */
function sortKey(field: ClusterOrderField): Prisma.Sql {
  switch (field) {
    case ClusterOrderField.NAME:
      return Prisma.sql`c.name`;
    case ClusterOrderField.CREATED_AT:
      return Prisma.sql`c."createdAt"`;
    case ClusterOrderField.LAST_REPORT:
      return Prisma.sql`COALESCE(s."lastReportAt", 'epoch'::timestamptz)`;
  }
}

export interface PageQuery {
  where: Prisma.Sql;
  order: ClusterOrder;
  size: number;
  backward: boolean;
  /** [sortValue, id] of the cursor the page starts after (forward) or ends before (backward). */
  cursor?: [string, string];
}

/** One row per cluster of the page, with what the Cluster type shows. */
export interface PageRow {
  id: string;
  name: string;
  topology: string;
  platform: string;
  region: string;
  infraID: string | null;
  labels: Prisma.JsonValue;
  managementCluster: string | null;
  hcpNamespace: string | null;
  clusterApiName: string | null;
  clusterApiNamespace: string | null;
  infrastructureProvider: string | null;
  createdAt: Date;
  generation: number;
  enabled: boolean;
  paused: boolean;
  clusterAutoscalerMode: string;
  logLevel: string;
  featureGates: Prisma.JsonValue;
  nodeClassOverrides: Prisma.JsonValue;
  webIdentityRoleArn: string | null;
  allowedInstanceTypes: string[];
  driftPolicy: string;
  observedGeneration: number;
  conditions: Prisma.JsonValue;
  metrics: Prisma.JsonValue;
  lastReportAt: Date | null;
  clusterAutoscaler: Prisma.JsonValue;
  machineConfigPools: Prisma.JsonValue;
  nodeClaims: Prisma.JsonValue;
  drift: Prisma.JsonValue;
  drifted: boolean;
  sidecarVersion: string | null;
  sidecarContractVersion: number | null;
  nodePools: { name: string; spec: Prisma.JsonValue; updatedAt: string }[];
  sort: string;
}

export function pageSql(q: PageQuery): Prisma.Sql {
  const key = sortKey(q.order.field);
  const ascending = (q.order.direction === OrderDirection.ASC) !== q.backward;
  const dir = ascending ? Prisma.sql`ASC` : Prisma.sql`DESC`;
  const cmp = ascending ? Prisma.sql`>` : Prisma.sql`<`;
  const keyText = q.order.field === ClusterOrderField.NAME ? key : Prisma.sql`(${key})`;
  const after = q.cursor
    ? q.order.field === ClusterOrderField.NAME
      ? Prisma.sql`AND (${keyText}, c.id) ${cmp} (${q.cursor[0]}, ${q.cursor[1]}::uuid)`
      : Prisma.sql`AND (${keyText}, c.id) ${cmp} (${q.cursor[0]}::timestamptz, ${q.cursor[1]}::uuid)`
    : Prisma.empty;
  // The whole page in one statement: cluster, desired state, status and NodePools.
  return Prisma.sql`
    SELECT c.id, c.name, c.topology::text AS topology, c.platform::text AS platform, c.region, c."infraID",
           c.labels, c."managementCluster", c."hcpNamespace", c."clusterApiName", c."clusterApiNamespace", c."infrastructureProvider", c."createdAt",
           d.generation, d.enabled, d.paused, d."clusterAutoscalerMode"::text AS "clusterAutoscalerMode",
           d."logLevel"::text AS "logLevel", d."featureGates", d."nodeClassOverrides", d."webIdentityRoleArn", d."allowedInstanceTypes",
           d."driftPolicy"::text AS "driftPolicy",
           s."observedGeneration", s.conditions, s.metrics, s."lastReportAt", s."clusterAutoscaler", s."machineConfigPools", s."nodeClaims",
           s.drift, s.drifted,
           s."sidecarVersion", s."sidecarContractVersion",
           COALESCE((SELECT jsonb_agg(jsonb_build_object('name', p.name, 'spec', p.spec, 'updatedAt', p."updatedAt") ORDER BY p.name)
                       FROM "NodePool" p WHERE p."clusterId" = c.id), '[]'::jsonb) AS "nodePools",
           ${q.order.field === ClusterOrderField.NAME ? key : Prisma.sql`to_char(${key} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`} AS sort
      FROM ${FROM}
     WHERE ${q.where} ${after}
     ORDER BY ${key} ${dir}, c.id ${dir}
     LIMIT ${q.size + 1}`;
}

/**
 * `totalCount` up to `limit` matches: the count reads at most `limit + 1` of them (the LIMIT in
 * the subquery stops the scan), so a list costs the same at any fleet size; `limit + 1` says
 * more match. It joins only the tables the filter reads: the placeholders keep user input out of
 * `where.sql`, so the aliases found there are ours.
 */
export function countSql(where: Prisma.Sql, limit: number): Prisma.Sql {
  const d = /\bd\./.test(where.sql);
  const s = /\bs\./.test(where.sql);
  const from = Prisma.sql`"Cluster" c
    ${d ? Prisma.sql`JOIN "DesiredState" d ON d."clusterId" = c.id` : Prisma.empty}
    ${s ? Prisma.sql`JOIN "ClusterStatus" s ON s."clusterId" = c.id` : Prisma.empty}`;
  return Prisma.sql`SELECT count(*)::int AS count FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT ${limit + 1}) matches`;
}

/**
 * The fleet summary's maintained count that is exactly this list's total, if one is: an unscoped
 * caller's list with no filter ('clusters'), or filtered on one maintained dimension alone
 * (platform, topology, Karpenter enabled, in sync). Every other filter or scope is counted.
 * A filter field this does not know (a new one) is counted too: only the fields named here map.
 */
export function maintainedCountKey(
  filter: ClusterFilter | null | undefined,
  principal: Principal,
): string | undefined {
  if (principal.scope) return undefined;
  // The same emptiness clusterWhere ignores: null, undefined and ''.
  const set = Object.entries(filter ?? {}).filter(([, v]) => v != null && v !== '');
  if (set.length === 0) return 'clusters';
  if (set.length > 1) return undefined;
  const [[field, value]] = set as [[string, unknown]];
  if (field === 'platform' || field === 'topology') return `${field}${SUMMARY_SEP}${String(value)}`;
  if (field === 'karpenterEnabled' && value === true) return 'enabled';
  if (field === 'inSync' && value === true) return 'inSync';
  return undefined;
}

export function inScopeSql(clusterId: string, principal: Principal): Prisma.Sql {
  const scope = principal.scope ? labelSelectorSql(principal.scope) : [];
  return Prisma.sql`SELECT c.id FROM "Cluster" c WHERE c.id = ${clusterId}::uuid ${
    scope.length ? Prisma.sql`AND ${Prisma.join(scope, ' AND ')}` : Prisma.empty
  }`;
}

export function fromPageRow(r: PageRow): ClusterView {
  return {
    id: r.id,
    name: r.name,
    topology: r.topology as ClusterView['topology'],
    platform: r.platform as ClusterView['platform'],
    region: r.region,
    infraID: r.infraID,
    labels: r.labels,
    managementCluster: r.managementCluster,
    hcpNamespace: r.hcpNamespace,
    clusterApiName: r.clusterApiName,
    clusterApiNamespace: r.clusterApiNamespace,
    infrastructureProvider: r.infrastructureProvider,
    createdAt: r.createdAt,
    desired: {
      generation: r.generation,
      enabled: r.enabled,
      paused: r.paused,
      clusterAutoscalerMode: r.clusterAutoscalerMode as NonNullable<
        ClusterView['desired']
      >['clusterAutoscalerMode'],
      logLevel: r.logLevel as NonNullable<ClusterView['desired']>['logLevel'],
      featureGates: r.featureGates,
      nodeClassOverrides: r.nodeClassOverrides,
      webIdentityRoleArn: r.webIdentityRoleArn,
      allowedInstanceTypes: r.allowedInstanceTypes,
      driftPolicy: r.driftPolicy as NonNullable<ClusterView['desired']>['driftPolicy'],
    },
    status: {
      observedGeneration: r.observedGeneration,
      conditions: r.conditions,
      metrics: r.metrics,
      lastReportAt: r.lastReportAt,
      clusterAutoscaler: r.clusterAutoscaler,
      machineConfigPools: r.machineConfigPools,
      nodeClaims: r.nodeClaims,
      drift: r.drift,
      drifted: r.drifted,
      sidecarVersion: r.sidecarVersion,
      sidecarContractVersion: r.sidecarContractVersion,
    },
    nodePools: r.nodePools.map((p) => ({
      name: p.name,
      spec: p.spec,
      updatedAt: new Date(p.updatedAt),
    })),
  };
}

import { Injectable } from '@nestjs/common';
import { PlannedObject as PlannedObjectSchema, type PlanReport } from '@fleet/contracts';
import { ChangePlanClusterState as DbState, Prisma, type PrismaClient } from '@fleet/database';
import { planWaves, type DesiredStateChange } from '@fleet/desired-state';
import { z } from 'zod';
import { AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { labelSelectorSql, parseSelectorInput } from '../clusters/cluster-query.js';
import { SetKarpenterSchema, NodePoolNameSchema } from '../clusters/cluster-input.schemas.js';
import { DesiredStateChanges } from '../clusters/desired-state-changes.service.js';
import { unsupportedChangeFor } from '../clusters/unsupported-change.js';
import type { Cluster } from '../clusters/models/cluster.model.js';
import { decodeCursor, encodeCursor, pageWindow, type PageArgs } from '../common/connection.js';
import {
  conflictError,
  forbiddenError,
  notFoundError,
  parseInput,
  userInputError,
} from '../common/errors.js';
import { isUuid, toGlobalId, uidOf } from '../common/global-id.js';
import { PrismaService } from '../database/prisma.service.js';
import { QueuesService } from '../queues/queues.service.js';
import {
  ChangePlanClusterState,
  type ChangePlan,
  type ChangePlanCluster,
  type ChangePlanClusterConnection,
  type ChangePlanCounts,
  type PlanChangeInput,
  type PlannedObject,
  type PlanWave,
} from './plan.model.js';
import type { RolloutStrategyInput } from '../rollouts/dto/rollout.inputs.js';
import { RolloutStrategySchema, stepShapeViolation } from '../rollouts/rollout-input.schemas.js';

/** How long a plan can be applied: long enough to review, short enough that it is still true. */
export const PLAN_TTL_SECONDS = 15 * 60;
/** A selector plans at most this many clusters (every one stored; the list is paginated). */
export const MAX_PLAN_CLUSTERS = 10_000;

/** The change a plan carries: setKarpenter's input, plus one NodePool operation. */
const PlanChangeSchema = z
  .object({
    change: SetKarpenterSchema.omit({ expectedGeneration: true }).nullish(),
    upsertNodePool: z
      .object({ name: NodePoolNameSchema, spec: z.record(z.string(), z.unknown()) })
      .nullish(),
    deleteNodePool: NodePoolNameSchema.nullish(),
  })
  .superRefine((input, ctx) => {
    if (input.upsertNodePool && input.deleteNodePool)
      ctx.addIssue({
        code: 'custom',
        path: ['deleteNodePool'],
        message: 'one NodePool operation per plan',
      });
  });

const scopeSql = (principal: Principal): Prisma.Sql =>
  principal.scope?.length
    ? Prisma.join(labelSelectorSql(principal.scope), ' AND ')
    : Prisma.sql`TRUE`;

type EntryRow = {
  clusterId: string;
  clusterName: string;
  generation: number;
  state: DbState;
  reason: string | null;
  message: string | null;
  objects: unknown;
  completedAt: Date | null;
};

const isStale = (conditions: unknown) =>
  Array.isArray(conditions) &&
  conditions.some(
    (c: { type?: string; status?: string }) => c?.type === 'Stale' && c.status === 'True',
  );

/**
 * Plans (issue 21 §1): planChange stores a plan and its clusters and asks the worker to send
 * plan orders; sidecars answer through the report endpoint (recordReport); applyPlan applies the
 * change through the same path as setKarpenter, at the generations the plan was computed at.
 */
@Injectable()
export class PlansService {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly queues: QueuesService,
    private readonly audit: AuditService,
    private readonly changes: DesiredStateChanges,
  ) {
    this.db = prisma.client;
  }

  async planChange(principal: Principal, input: PlanChangeInput): Promise<ChangePlan> {
    if ((input.clusterId == null) === (input.labelSelector == null))
      throw userInputError('input.clusterId', 'give exactly one of clusterId or labelSelector');
    const parsed = parseInput(PlanChangeSchema, input, 'input');
    const change = Object.fromEntries(
      Object.entries({
        ...(parsed.change ?? {}),
        upsertNodePool: parsed.upsertNodePool,
        deleteNodePool: parsed.deleteNodePool,
      }).filter(([, v]) => v != null),
    ) as DesiredStateChange;
    if (Object.keys(change).length === 0)
      throw userInputError('input.change', 'must change at least one thing');
    const clusterUid = input.clusterId
      ? uidOf('Cluster', input.clusterId, 'input.clusterId')
      : null;
    const requirements =
      input.labelSelector != null
        ? parseSelectorInput(input.labelSelector, 'input.labelSelector')
        : null;
    if (input.labelSelector != null && !input.labelSelector.trim())
      throw userInputError('input.labelSelector', 'must not be blank');

    const { id, pending } = await this.db.$transaction(async (tx) => {
      const conds = [
        Prisma.sql`TRUE`,
        scopeSql(principal),
        ...(clusterUid ? [Prisma.sql`c.id = ${clusterUid}::uuid`] : []),
        ...(requirements ? labelSelectorSql(requirements) : []),
      ];
      const clusters = await tx.$queryRaw<
        {
          id: string;
          name: string;
          platform: string;
          topology: string;
          managementCluster: string | null;
          generation: number;
          paused: boolean;
          conditions: unknown;
        }[]
      >`
        SELECT c.id, c.name, c.platform::text AS platform, c.topology::text AS topology,
               c."managementCluster", d.generation, d.paused, s.conditions
          FROM "Cluster" c
          JOIN "DesiredState" d ON d."clusterId" = c.id
          LEFT JOIN "ClusterStatus" s ON s."clusterId" = c.id
         WHERE ${Prisma.join(conds, ' AND ')}
         ORDER BY c.name, c.id
         LIMIT ${MAX_PLAN_CLUSTERS + 1}`;
      if (clusterUid && clusters.length === 0)
        throw notFoundError('cluster', toGlobalId('Cluster', clusterUid));
      if (clusters.length === 0)
        throw userInputError(
          'input.labelSelector',
          principal.scope ? 'matches no cluster within your token scope' : 'matches no cluster',
        );
      if (clusters.length > MAX_PLAN_CLUSTERS)
        throw userInputError(
          'input.labelSelector',
          `matches more than ${MAX_PLAN_CLUSTERS} clusters; narrow it`,
        );
      const now = new Date();
      const plan = await tx.changePlan.create({
        data: {
          expiresAt: new Date(now.getTime() + PLAN_TTL_SECONDS * 1000),
          createdBy: principal.name,
          createdByTokenId: principal.tokenId,
          clusterId: clusterUid,
          labelSelector: input.labelSelector ?? null,
          change: change as Prisma.InputJsonObject,
        },
      });
      let pending = 0;
      const entries = clusters.map((c) => {
        const base = {
          planId: plan.id,
          clusterId: c.id,
          clusterName: c.name,
          generation: c.generation,
        };
        const notPlanned = (reason: string, message: string) => ({
          ...base,
          state: DbState.NOT_PLANNED,
          reason,
          message,
          completedAt: now,
        });
        if (c.topology === 'HOSTED')
          return notPlanned(
            'UnsupportedForTopology',
            'plans are not supported for HOSTED clusters yet: their sidecar does not dry-run changes',
          );
        // A paused cluster's sidecar changes nothing, so what it would do is not knowable; a
        // change that resumes it is planned.
        if (c.paused && change.paused !== false)
          return notPlanned('Paused', 'the cluster is paused: its sidecar leaves it as it is');
        if (isStale(c.conditions))
          return notPlanned(
            'Stale',
            'the cluster has not reported recently: its sidecar may not answer, and what it saw is old',
          );
        const refusal = unsupportedChangeFor(c, change);
        if (refusal)
          return notPlanned('UnsupportedChange', `change.${refusal.field}: ${refusal.reason}`);
        pending++;
        return { ...base, state: DbState.PENDING };
      });
      await tx.changePlanCluster.createMany({ data: entries });
      await this.audit.record(tx, principal, 'planChange', clusterUid, null, {
        planId: plan.id,
        labelSelector: input.labelSelector ?? null,
        clusters: clusters.length,
        change,
      });
      return { id: plan.id, pending };
    });
    if (pending > 0) await this.queues.requestPlan({ planId: id });
    return this.get(principal, id);
  }

  async get(principal: Principal, id: string): Promise<ChangePlan> {
    if (!isUuid(id)) throw userInputError('id', 'must be a plan ID');
    const plan = await this.db.changePlan.findUnique({ where: { id } });
    if (!plan) throw notFoundError('plan', id);
    const counts = await this.counts(principal, id, plan.expiresAt);
    // A scoped token sees a plan only through the clusters of it within its scope.
    if (principal.scope && counts.total === 0) throw notFoundError('plan', id);
    return {
      id: plan.id,
      createdAt: plan.createdAt,
      expiresAt: plan.expiresAt,
      expired: plan.expiresAt.getTime() <= Date.now(),
      createdBy: plan.createdBy,
      clusterId: plan.clusterId ? toGlobalId('Cluster', plan.clusterId) : null,
      labelSelector: plan.labelSelector,
      change: plan.change,
      appliedAt: plan.appliedAt,
      appliedBy: plan.appliedBy,
      rolloutId: plan.rolloutId ? toGlobalId('Rollout', plan.rolloutId) : null,
      counts,
    };
  }

  private async counts(
    principal: Principal,
    id: string,
    expiresAt: Date,
  ): Promise<ChangePlanCounts> {
    const expired = expiresAt.getTime() <= Date.now();
    const [row] = await this.db.$queryRaw<Record<string, number>[]>`
      SELECT count(*)::int AS total,
             count(*) FILTER (WHERE e.state = 'PENDING')::int AS pending,
             count(*) FILTER (WHERE e.state = 'PLANNED')::int AS planned,
             count(*) FILTER (WHERE e.state = 'NOT_PLANNED')::int AS "notPlanned",
             count(*) FILTER (WHERE e.state = 'FAILED')::int AS failed,
             count(*) FILTER (WHERE e.state = 'PLANNED' AND EXISTS (
               SELECT 1 FROM jsonb_array_elements(e.objects) o
                WHERE jsonb_array_length(COALESCE(o->'errors', '[]'::jsonb)) > 0))::int AS invalid,
             COALESCE(sum((SELECT count(*) FROM jsonb_array_elements(COALESCE(e.objects, '[]'::jsonb)) o WHERE o->>'action' = 'CREATED')), 0)::int AS created,
             COALESCE(sum((SELECT count(*) FROM jsonb_array_elements(COALESCE(e.objects, '[]'::jsonb)) o WHERE o->>'action' = 'CHANGED')), 0)::int AS changed,
             COALESCE(sum((SELECT count(*) FROM jsonb_array_elements(COALESCE(e.objects, '[]'::jsonb)) o WHERE o->>'action' = 'DELETED')), 0)::int AS deleted,
             COALESCE(sum((SELECT count(*) FROM jsonb_array_elements(COALESCE(e.objects, '[]'::jsonb)) o WHERE o->>'action' = 'UNCHANGED')), 0)::int AS unchanged
        FROM "ChangePlanCluster" e JOIN "Cluster" c ON c.id = e."clusterId"
       WHERE e."planId" = ${id}::uuid AND ${scopeSql(principal)}`;
    const counts = row as unknown as ChangePlanCounts;
    // Past expiry, a cluster that never answered is FAILED (NoAnswer).
    if (expired && counts.pending > 0) {
      counts.failed += counts.pending;
      counts.pending = 0;
    }
    return counts;
  }

  /** The plan's clusters in name order, a page at a time (keyset on name, id). */
  async clusters(
    principal: Principal,
    plan: Pick<ChangePlan, 'id' | 'expiresAt'>,
    args: PageArgs & { state?: ChangePlanClusterState | null },
  ): Promise<ChangePlanClusterConnection> {
    const { size } = pageWindow({ first: args.first, after: args.after }, 20);
    if (args.last != null || args.before != null)
      throw userInputError('last', 'plan clusters page forward only (first/after)');
    const conds = [Prisma.sql`e."planId" = ${plan.id}::uuid`, scopeSql(principal)];
    const expired = plan.expiresAt.getTime() <= Date.now();
    if (args.state) {
      // Past expiry PENDING reads as FAILED (NoAnswer): filter as it reads.
      if (expired && args.state === ChangePlanClusterState.FAILED)
        conds.push(Prisma.sql`e.state IN ('FAILED', 'PENDING')`);
      else if (expired && args.state === ChangePlanClusterState.PENDING)
        conds.push(Prisma.sql`FALSE`);
      else conds.push(Prisma.sql`e.state = ${args.state}::"ChangePlanClusterState"`);
    }
    const where = Prisma.join(conds, ' AND ');
    const after = args.after ? decodeCursor(args.after, 'after') : undefined;
    if (after && (typeof after[0] !== 'string' || !isUuid(after[1])))
      throw userInputError('after', 'is not a cursor returned by this API');
    const rows = await this.db.$queryRaw<EntryRow[]>`
      SELECT e."clusterId", e."clusterName", e.generation, e.state, e.reason, e.message,
             e.objects, e."completedAt"
        FROM "ChangePlanCluster" e JOIN "Cluster" c ON c.id = e."clusterId"
       WHERE ${where}
         ${after ? Prisma.sql`AND (e."clusterName", e."clusterId") > (${String(after[0])}, ${String(after[1])}::uuid)` : Prisma.empty}
       ORDER BY e."clusterName", e."clusterId"
       LIMIT ${size + 1}`;
    const [total] = await this.db.$queryRaw<{ count: number }[]>`
      SELECT count(*)::int AS count
        FROM "ChangePlanCluster" e JOIN "Cluster" c ON c.id = e."clusterId" WHERE ${where}`;
    const page = rows.slice(0, size);
    const edges = page.map((r) => ({
      cursor: encodeCursor([r.clusterName, r.clusterId]),
      node: this.entry(r, expired),
    }));
    return {
      edges,
      nodes: edges.map((e) => e.node),
      totalCount: total?.count ?? 0,
      pageInfo: {
        hasNextPage: rows.length > size,
        hasPreviousPage: after !== undefined,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges[edges.length - 1]?.cursor ?? null,
      },
    };
  }

  private entry(r: EntryRow, expired: boolean): ChangePlanCluster {
    const noAnswer = expired && r.state === DbState.PENDING;
    const objects = Array.isArray(r.objects) ? r.objects : [];
    return {
      clusterId: toGlobalId('Cluster', r.clusterId),
      clusterUid: r.clusterId,
      clusterName: r.clusterName,
      generation: r.generation,
      state: noAnswer
        ? ChangePlanClusterState.FAILED
        : (r.state as unknown as ChangePlanClusterState),
      reason: noAnswer ? 'NoAnswer' : r.reason,
      message: noAnswer ? 'no answer from the sidecar before the plan expired' : r.message,
      objects: objects.map((o): PlannedObject => {
        const p = PlannedObjectSchema.parse(o);
        return {
          target: p.target,
          apiVersion: p.apiVersion,
          kind: p.kind,
          namespace: p.namespace ?? null,
          name: p.name,
          action: p.action as PlannedObject['action'],
          diff: p.diff.map((d) => ({
            path: d.path,
            before: d.before ?? null,
            after: d.after ?? null,
          })),
          moreFields: p.moreFields ?? 0,
          errors: p.errors.map((e) => ({
            field: e.field,
            message: e.message,
            reason: e.reason ?? null,
          })),
        };
      }),
      completedAt: r.completedAt,
    };
  }

  /**
   * Applies the plan's change to its PLANNED clusters through the same path as setKarpenter, at
   * the generation each was planned at: CONFLICT (naming the cluster) if one moved since, or if
   * the plan expired, was applied already or is still being planned.
   */
  async apply(principal: Principal, id: string): Promise<Cluster[]> {
    const plan = await this.get(principal, id);
    if (plan.appliedAt)
      throw conflictError(`plan ${id} was applied at ${plan.appliedAt.toISOString()}`);
    if (plan.rolloutId)
      throw conflictError(`plan ${id} started rollout ${plan.rolloutId}; it is used up`);
    if (plan.expired)
      throw conflictError(
        `plan ${id} expired at ${plan.expiresAt.toISOString()}; plan the change again`,
      );
    const entries = await this.db.$queryRaw<
      {
        clusterId: string;
        clusterName: string;
        generation: number;
        state: DbState;
        objects: unknown;
      }[]
    >`
      SELECT e."clusterId", e."clusterName", e.generation, e.state, e.objects
        FROM "ChangePlanCluster" e JOIN "Cluster" c ON c.id = e."clusterId"
       WHERE e."planId" = ${id}::uuid AND ${scopeSql(principal)}
       ORDER BY e."clusterName"`;
    // Applying uses the whole plan up: a scoped token may do so only when it sees all of it.
    if (principal.scope) {
      const [all] = await this.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM "ChangePlanCluster" WHERE "planId" = ${id}::uuid`;
      if ((all?.n ?? 0) !== entries.length)
        throw forbiddenError(
          `plan ${id} covers clusters outside this token's scope; apply it with a token that may change all of them`,
        );
    }
    const pending = entries.find((e) => e.state === DbState.PENDING);
    if (pending)
      throw conflictError(`plan ${id} is still being planned on cluster ${pending.clusterName}`);
    const refused = entries.find(
      (e) =>
        e.state === DbState.PLANNED &&
        Array.isArray(e.objects) &&
        e.objects.some((o: { errors?: unknown[] }) => (o.errors?.length ?? 0) > 0),
    );
    if (refused)
      throw userInputError(
        'id',
        `cluster ${refused.clusterName}'s API server refused the planned change; fix it and plan again`,
      );
    const targets = entries.filter((e) => e.state === DbState.PLANNED);
    if (targets.length === 0)
      throw userInputError('id', 'the plan has no PLANNED cluster to apply to');
    return this.changes.applyAtGenerations(
      principal,
      targets,
      plan.change as DesiredStateChange,
      'applyPlan',
      async (tx) => {
        const { count } = await tx.changePlan.updateMany({
          where: { id, appliedAt: null, rolloutId: null },
          data: { appliedAt: new Date(), appliedBy: principal.name },
        });
        if (count === 0) throw conflictError(`plan ${id} was applied or rolled out meanwhile`);
      },
    );
  }

  /**
   * The waves startRollout(planId, strategy) would run now: the plan's PLANNED clusters (within
   * the reader's scope) split by the same planWaves the rollout uses, each with its size and the
   * first `sample` names; the per-cluster diffs are the plan's clusters(state: PLANNED).
   */
  async wavePlan(
    principal: Principal,
    planId: string,
    strategyInput: RolloutStrategyInput | null | undefined,
    sample: number,
  ): Promise<PlanWave[]> {
    if (sample < 0 || sample > 100) throw userInputError('sample', 'must be 0–100');
    const badStep = stepShapeViolation(strategyInput?.waves);
    if (badStep)
      throw userInputError(
        `strategy.waves[${badStep.index}]`,
        'give exactly one of percent or count',
      );
    const strategy = parseInput(RolloutStrategySchema, strategyInput ?? {}, 'strategy');
    const planned = await this.db.$queryRaw<{ id: string; name: string }[]>`
      SELECT e."clusterId" AS id, e."clusterName" AS name
        FROM "ChangePlanCluster" e JOIN "Cluster" c ON c.id = e."clusterId"
       WHERE e."planId" = ${planId}::uuid AND e.state = 'PLANNED' AND ${scopeSql(principal)}
       ORDER BY e."clusterName", e."clusterId"`;
    if (planned.length === 0) return [];
    return planWaves(planned, strategy.waves).map((w, index) => ({
      index,
      size: w.length,
      clusterNames: w.slice(0, sample).map((c) => c.name),
      more: Math.max(0, w.length - sample),
    }));
  }

  /**
   * A sidecar's answer (authenticated by the report endpoint as that cluster's): recorded only
   * for a PENDING entry of that cluster at the generation the plan's order carried.
   */
  async recordReport(report: PlanReport): Promise<'recorded' | 'unknown'> {
    const { count } = await this.db.changePlanCluster.updateMany({
      where: {
        planId: report.planId,
        clusterId: report.clusterId,
        state: DbState.PENDING,
        generation: report.generation - 1,
      },
      data: {
        state: report.outcome === 'PLANNED' ? DbState.PLANNED : DbState.FAILED,
        reason: report.reason ?? null,
        message: report.message ?? null,
        objects: report.objects as unknown as Prisma.InputJsonArray,
        completedAt: new Date(),
      },
    });
    return count === 1 ? 'recorded' : 'unknown';
  }
}

import { Injectable } from '@nestjs/common';
import { Prisma, type PrismaClient } from '@fleet/database';
import { AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { labelSelectorSql, parseSelectorInput } from '../clusters/cluster-query.js';
import { KarpenterSpecValidator } from '../clusters/karpenter-spec.validator.js';
import {
  conflictError,
  forbiddenError,
  notFoundError,
  parseInput,
  userInputError,
} from '../common/errors.js';
import { isUuid, toGlobalId } from '../common/global-id.js';
import { PrismaService } from '../database/prisma.service.js';
import type { RolloutChangeInput, RolloutStrategyInput } from './dto/rollout.inputs.js';
import { scopeSql, type Labels, type Tx } from './rollout-access.js';
import { createRollout } from './rollout-creation.js';
import { RolloutChangeSchema } from './rollout-input.schemas.js';
import { resolveStrategy } from './rollout-strategy.js';

/** A console selection is a page or a few; a larger set is what a selector is for. */
const MAX_CLUSTER_IDS = 1000;

/**
 * Starting rollouts: choosing their clusters (a selector, a plan, a profile's write) under the
 * start lock, so two rollouts cannot both pass the overlap check for one cluster. Each returns the
 * new rollout's ID; RolloutsService announces it once committed.
 */
@Injectable()
export class RolloutStarts {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly specs: KarpenterSpecValidator,
  ) {
    this.db = prisma.client;
  }

  async start(
    principal: Principal,
    selector: string,
    changeInput: RolloutChangeInput,
    strategyInput: RolloutStrategyInput | null | undefined,
    clusterIds: readonly string[] | null = null,
    strategyName: string | null = null,
  ): Promise<string> {
    if (selector !== '' && selector.trim() === '')
      throw userInputError('selector', 'must not be blank; "" selects every cluster in scope');
    const requirements = parseSelectorInput(selector, 'selector');
    const change = parseInput(RolloutChangeSchema, changeInput, 'change');
    const upsert = changeInput.upsertNodePool;
    if (upsert) {
      const violation = this.specs.validateNodePool(upsert.name, upsert.spec)[0];
      if (violation)
        throw userInputError(
          `change.upsertNodePool.spec${violation.field ? `.${violation.field}` : ''}`,
          violation.reason,
        );
    }
    if (clusterIds) {
      if (clusterIds.length === 0)
        throw userInputError('clusterIds', 'must name at least one cluster (or be left out)');
      if (clusterIds.length > MAX_CLUSTER_IDS)
        throw userInputError('clusterIds', `at most ${MAX_CLUSTER_IDS} clusters`);
    }

    return this.db.$transaction(async (tx) => {
      // Starts serialize, so two rollouts cannot both pass the overlap check for one cluster.
      const strategy = await resolveStrategy(tx, strategyInput, strategyName);
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('karpenter-fleet:start-rollout'))`;
      const conds = [Prisma.sql`TRUE`, ...labelSelectorSql(requirements), scopeSql(principal)];
      let clusters = await tx.$queryRaw<{ id: string; name: string; labels: Labels | null }[]>`
        SELECT c.id, c.name, c.labels FROM "Cluster" c WHERE ${Prisma.join(conds, ' AND ')} ORDER BY c.name, c.id`;
      if (clusterIds) {
        // A picked cluster outside the selector or the scope is refused rather than dropped: the
        // caller chose it, so silently leaving it out would start a different rollout.
        const matched = new Set(clusters.map((c) => c.id));
        const outside = clusterIds.findIndex((id) => !matched.has(id));
        if (outside >= 0)
          throw userInputError(
            `clusterIds[${outside}]`,
            principal.scope
              ? 'is not a cluster the selector matches within your token scope'
              : 'is not a cluster the selector matches',
          );
        const picked = new Set(clusterIds);
        clusters = clusters.filter((c) => picked.has(c.id));
      }
      if (!clusters.length) {
        throw userInputError(
          'selector',
          principal.scope ? 'matches no cluster within your token scope' : 'matches no cluster',
        );
      }
      return createRollout(tx, this.audit, principal, {
        selector,
        change,
        strategy,
        clusters,
        planId: null,
      });
    });
  }

  /**
   * startRollout(planId): the plan's change, to the plan's PLANNED clusters (within the caller's
   * scope), in waves. Refused (CONFLICT) if the plan expired, is still being planned, was applied
   * or already started a rollout; USER_INPUT if an API server refused the planned change or no
   * cluster is PLANNED. A cluster whose desired generation moved since the plan is not refused
   * here: its wave SKIPs it (DesiredStateMoved), the rule every wave applies (docs/ROLLOUTS.md).
   */
  async startFromPlan(
    principal: Principal,
    planId: string,
    strategyInput: RolloutStrategyInput | null | undefined,
    strategyName: string | null = null,
  ): Promise<string> {
    if (!isUuid(planId)) throw userInputError('planId', 'must be a plan ID');
    return this.db.$transaction(
      async (tx) => {
        const strategy = await resolveStrategy(tx, strategyInput, strategyName);
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('karpenter-fleet:start-rollout'))`;
        const plans = await tx.$queryRaw<
          {
            id: string;
            expiresAt: Date;
            appliedAt: Date | null;
            rolloutId: string | null;
            labelSelector: string | null;
            change: unknown;
          }[]
        >`
          SELECT id, "expiresAt", "appliedAt", "rolloutId", "labelSelector", change
            FROM "ChangePlan" WHERE id = ${planId}::uuid FOR UPDATE`;
        const plan = plans[0];
        const entries = plan
          ? await tx.$queryRaw<
              {
                clusterId: string;
                clusterName: string;
                generation: number;
                state: string;
                refused: boolean;
                labels: Labels | null;
              }[]
            >`
              SELECT e."clusterId", e."clusterName", e.generation, e.state::text AS state, c.labels,
                     (e.state = 'PLANNED' AND EXISTS (
                       SELECT 1 FROM jsonb_array_elements(COALESCE(e.objects, '[]'::jsonb)) o
                        WHERE jsonb_array_length(COALESCE(o->'errors', '[]'::jsonb)) > 0)) AS refused
                FROM "ChangePlanCluster" e JOIN "Cluster" c ON c.id = e."clusterId"
               WHERE e."planId" = ${planId}::uuid AND ${scopeSql(principal)}
               ORDER BY e."clusterName", e."clusterId"`
          : [];
        // A scoped token sees a plan only through its clusters within scope (as PlansService.get).
        if (!plan || (principal.scope && entries.length === 0)) throw notFoundError('plan', planId);
        // Starting uses the whole plan up: a scoped token may do so only when it sees all of it.
        if (principal.scope) {
          const [all] = await tx.$queryRaw<{ n: number }[]>`
            SELECT count(*)::int AS n FROM "ChangePlanCluster" WHERE "planId" = ${planId}::uuid`;
          if ((all?.n ?? 0) !== entries.length)
            throw forbiddenError(
              `plan ${planId} covers clusters outside this token's scope; start it with a token that may change all of them`,
            );
        }
        if (plan.appliedAt)
          throw conflictError(`plan ${planId} was applied at ${plan.appliedAt.toISOString()}`);
        if (plan.rolloutId)
          throw conflictError(
            `plan ${planId} already started rollout ${toGlobalId('Rollout', plan.rolloutId)}`,
          );
        if (plan.expiresAt.getTime() <= Date.now())
          throw conflictError(
            `plan ${planId} expired at ${plan.expiresAt.toISOString()}; plan the change again`,
          );
        const pending = entries.find((e) => e.state === 'PENDING');
        if (pending)
          throw conflictError(
            `plan ${planId} is still being planned on cluster ${pending.clusterName}`,
          );
        const refused = entries.find((e) => e.refused);
        if (refused)
          throw userInputError(
            'planId',
            `cluster ${refused.clusterName}'s API server refused the planned change; fix it and plan again`,
          );
        const clusters = entries
          .filter((e) => e.state === 'PLANNED')
          .map((e) => ({
            id: e.clusterId,
            name: e.clusterName,
            labels: e.labels,
            planGeneration: e.generation,
          }));
        if (!clusters.length)
          throw userInputError('planId', 'the plan has no PLANNED cluster to roll out to');
        const rolloutId = await createRollout(tx, this.audit, principal, {
          selector: plan.labelSelector ?? '',
          change: plan.change as Record<string, unknown>,
          strategy,
          clusters,
          planId,
        });
        const { count } = await tx.changePlan.updateMany({
          where: { id: planId, appliedAt: null, rolloutId: null },
          data: { rolloutId },
        });
        if (count === 0) throw conflictError(`plan ${planId} was used meanwhile`);
        return rolloutId;
      },
      { timeout: 60_000 },
    );
  }

  /**
   * A profile's rollout (docs/PROFILES.md § Rollouts): created inside the profile write's
   * transaction over the clusters it affects, so the profile's revision and its rollout commit
   * together. Each wave binds its clusters to `revision` (or unbinds those that no longer match).
   * The strategy is the one startRollout takes; a cluster in another active rollout is CONFLICT.
   */
  async createForProfile(
    tx: Tx,
    principal: Principal,
    input: {
      profileId: string;
      profileName: string;
      revision: number;
      selector: string;
      strategy: RolloutStrategyInput | null | undefined;
      strategyName: string | null | undefined;
      clusters: { id: string; name: string; labels: Labels | null }[];
    },
  ): Promise<string> {
    const strategy = await resolveStrategy(tx, input.strategy, input.strategyName);
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('karpenter-fleet:start-rollout'))`;
    return createRollout(tx, this.audit, principal, {
      selector: input.selector,
      change: { profile: input.profileName, revision: input.revision },
      strategy,
      clusters: input.clusters,
      planId: null,
      profile: { id: input.profileId, revision: input.revision },
    });
  }
}

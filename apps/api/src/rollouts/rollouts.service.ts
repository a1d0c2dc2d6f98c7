import { Injectable } from '@nestjs/common';
import { Prisma, type PrismaClient } from '@fleet/database';
import { planStages, UnheldApprovalGate } from '@fleet/desired-state';
import { AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { labelSelectorSql, parseSelectorInput } from '../clusters/cluster-query.js';
import { KarpenterSpecValidator } from '../clusters/karpenter-spec.validator.js';
import { decodeCursor, encodeCursor, pageWindow } from '../common/connection.js';
import {
  conflictError,
  forbiddenError,
  notFoundError,
  parseInput,
  userInputError,
} from '../common/errors.js';
import { isUuid, toGlobalId } from '../common/global-id.js';
import { PrismaService } from '../database/prisma.service.js';
import { FleetEventsService } from '../events/fleet-events.service.js';
import type { RolloutChangeInput, RolloutStrategyInput } from './dto/rollout.inputs.js';
import {
  Rollout,
  RolloutClusterState,
  RolloutState,
  RolloutWaveState,
  type RolloutClusterProgress,
  type RolloutConnection,
  type RolloutCounts,
} from './models/rollout.model.js';
import { RolloutChangeSchema } from './rollout-input.schemas.js';
import { resolveStrategy, type ResolvedStrategy } from './rollout-strategy.js';

type Tx = Prisma.TransactionClient;

/** A console selection is a page or a few; a larger set is what a selector is for. */
const MAX_CLUSTER_IDS = 1000;
type RolloutRow = Prisma.RolloutGetPayload<{ include: { waves: true; clusters: true } }>;

/** Rollouts that still hold their clusters: a second rollout may not take them meanwhile. */
const ACTIVE: RolloutState[] = [
  RolloutState.RUNNING,
  RolloutState.WAITING_APPROVAL,
  RolloutState.PAUSED,
  RolloutState.FAILED,
];

type Labels = Record<string, string>;

const scopeSql = (principal: Principal): Prisma.Sql =>
  principal.scope?.length
    ? Prisma.join(labelSelectorSql(principal.scope), ' AND ')
    : Prisma.sql`TRUE`;

/**
 * Starting and steering rollouts. The API only writes intent (the plan, a state change); the
 * worker's rollout driver applies waves and judges health. Every write here takes the rollout's
 * row lock, which the driver's tick also holds, so a pause never lands in the middle of a step.
 */
@Injectable()
export class RolloutsService {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly specs: KarpenterSpecValidator,
    private readonly events: FleetEventsService,
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
  ): Promise<Rollout> {
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

    const id = await this.db.$transaction(async (tx) => {
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
      return this.create(tx, principal, { selector, change, strategy, clusters, planId: null });
    });
    await this.changed(id);
    return this.get(principal, id);
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
  ): Promise<Rollout> {
    if (!isUuid(planId)) throw userInputError('planId', 'must be a plan ID');
    const id = await this.db.$transaction(
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
        const rolloutId = await this.create(tx, principal, {
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
    await this.changed(id);
    return this.get(principal, id);
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
    return this.create(tx, principal, {
      selector: input.selector,
      change: { profile: input.profileName, revision: input.revision },
      strategy,
      clusters: input.clusters,
      planId: null,
      profile: { id: input.profileId, revision: input.revision },
    });
  }

  /** After a profile's transaction committed: subscribers learn of its rollout. */
  async announce(rolloutId: string): Promise<void> {
    await this.changed(rolloutId);
  }

  /** The rollout row, its waves and clusters, once the clusters are chosen (inside the start lock). */
  private async create(
    tx: Tx,
    principal: Principal,
    input: {
      selector: string;
      change: Record<string, unknown>;
      strategy: ResolvedStrategy;
      clusters: { id: string; name: string; labels: Labels | null; planGeneration?: number }[];
      planId: string | null;
      profile?: { id: string; revision: number };
    },
  ): Promise<string> {
    const { selector, change, strategy, clusters, planId, profile } = input;
    const busy = await tx.$queryRaw<{ name: string; rolloutId: string; state: string }[]>`
      SELECT rc."clusterName" AS name, r.id AS "rolloutId", r.state::text AS state
        FROM "RolloutCluster" rc JOIN "Rollout" r ON r.id = rc."rolloutId"
       WHERE r.state::text = ANY(${ACTIVE}::text[]) AND rc.state IN ('PENDING', 'APPLYING')
         AND rc."clusterId" = ANY(${clusters.map((c) => c.id)}::uuid[])
       LIMIT 1`;
    if (busy[0]) {
      throw conflictError(
        `cluster ${busy[0].name} is part of rollout ${toGlobalId('Rollout', busy[0].rolloutId)} (${busy[0].state}); complete or abort it first`,
      );
    }
    const waves = (() => {
      try {
        return planStages(
          clusters.map((c) => ({ ...c, labels: c.labels ?? {} })),
          strategy.stages,
        );
      } catch (err) {
        // Refused rather than started at a gate before wave 0: nothing is written, and the caller
        // learns at once that the checkpoint they asked for has no clusters to stand on.
        if (err instanceof UnheldApprovalGate)
          throw userInputError(
            'strategyName',
            `strategy ${strategy.name ?? '(inline)'}: ${err.message}`,
          );
        throw err;
      }
    })();
    // The scope as the token states it, for the driver to re-check when each wave comes.
    const token = principal.scope
      ? await tx.apiToken.findUnique({
          where: { id: principal.tokenId },
          select: { labelSelector: true },
        })
      : null;
    const rollout = await tx.rollout.create({
      data: {
        selector,
        scopeSelector: token?.labelSelector ?? null,
        change: change as Prisma.InputJsonObject,
        waveSteps: strategy.steps,
        minHealthySeconds: strategy.minHealthySeconds,
        maxFailures: strategy.maxFailures,
        waveTimeoutSeconds: strategy.waveTimeoutSeconds,
        strategyName: strategy.name,
        maxNodeClaimLaunchFailures: strategy.maxNodeClaimLaunchFailures,
        maxPendingPodSeconds: strategy.maxPendingPodSeconds,
        createdBy: principal.name,
        createdByTokenId: principal.tokenId,
        planId,
        profileId: profile?.id ?? null,
        profileRevision: profile?.revision ?? null,
        waves: {
          create: waves.map((w, index) => ({
            index,
            size: w.clusters.length,
            selector: w.selector,
            minHealthySeconds: w.minHealthySeconds,
            approval: w.approval,
            pauseSeconds: w.pauseSeconds,
          })),
        },
        clusters: {
          create: waves.flatMap((w, wave) =>
            w.clusters.map((c) => ({
              clusterId: c.id,
              clusterName: c.name,
              wave,
              planGeneration: c.planGeneration ?? null,
            })),
          ),
        },
      },
    });
    await this.audit.record(tx, principal, 'startRollout', null, null, {
      rolloutId: rollout.id,
      selector,
      planId,
      change: change as Prisma.InputJsonObject,
      strategy: {
        name: strategy.name,
        waves: strategy.steps,
        minHealthySeconds: strategy.minHealthySeconds,
        maxFailures: strategy.maxFailures,
        waveTimeoutSeconds: strategy.waveTimeoutSeconds,
        maxNodeClaimLaunchFailures: strategy.maxNodeClaimLaunchFailures,
        maxPendingPodSeconds: strategy.maxPendingPodSeconds,
      },
      waves: waves.map((w) => w.clusters.map((c) => c.name)),
    });
    return rollout.id;
  }

  pause(principal: Principal, uid: string): Promise<Rollout> {
    return this.steer(
      principal,
      uid,
      'pauseRollout',
      [RolloutState.RUNNING, RolloutState.WAITING_APPROVAL],
      async (tx) => {
        await tx.rollout.update({
          where: { id: uid },
          data: { state: 'PAUSED', reason: `paused by ${principal.name}` },
        });
      },
    );
  }

  /**
   * Lets a rollout waiting at a stage's approval gate start its next wave (on the starter's
   * authority, which the driver keeps checking). Approving a stage already approved is a no-op,
   * so a retried approval is harmless; a stage not waiting is CONFLICT.
   */
  async approve(principal: Principal, uid: string, stage: number): Promise<Rollout> {
    if (!Number.isInteger(stage) || stage < 0)
      throw userInputError('stage', 'must be a wave index (0 or more)');
    const approved = await this.db.$transaction(async (tx) => {
      const row = await this.lockForSteering(tx, principal, uid, 'approveRolloutStage');
      const wave = await tx.rolloutWave.findUnique({
        where: { rolloutId_index: { rolloutId: uid, index: stage } },
      });
      if (!wave) throw userInputError('stage', `the rollout has no wave ${stage}`);
      if (wave.approvedAt) return false;
      if (row.state !== (RolloutState.WAITING_APPROVAL as string) || row.currentWave !== stage)
        throw conflictError(
          `stage ${stage} is not waiting for approval: the rollout is ${row.state} at wave ${row.currentWave}` +
            (wave.approval ? '' : ` and wave ${stage} has no approval gate`),
        );
      await tx.rolloutWave.update({
        where: { rolloutId_index: { rolloutId: uid, index: stage } },
        data: { approvedAt: new Date(), approvedBy: principal.name },
      });
      await tx.rollout.update({ where: { id: uid }, data: { state: 'RUNNING', reason: null } });
      await this.audit.record(
        tx,
        principal,
        'approveRolloutStage',
        null,
        { rolloutId: uid, state: row.state, stage },
        { rolloutId: uid, stage, approvedBy: principal.name },
      );
      return true;
    });
    if (approved) await this.changed(uid);
    return this.get(principal, uid);
  }

  /**
   * Continues a PAUSED or FAILED rollout. Failed clusters are watched again (not re-applied: the
   * change is already their desired state) and the current wave gets a fresh deadline.
   */
  resume(principal: Principal, uid: string): Promise<Rollout> {
    return this.steer(
      principal,
      uid,
      'resumeRollout',
      [RolloutState.PAUSED, RolloutState.FAILED],
      async (tx, row) => {
        const now = new Date();
        const deadlineAt = new Date(now.getTime() + row.waveTimeoutSeconds * 1000);
        const failed = await tx.rolloutCluster.findMany({
          where: { rolloutId: uid, state: 'FAILED' },
          select: { wave: true },
          distinct: ['wave'],
        });
        await tx.rolloutCluster.updateMany({
          where: { rolloutId: uid, state: 'FAILED' },
          data: { state: 'APPLYING', reason: null, healthySince: null, finishedAt: null },
        });
        // Every cluster watched again is judged against a fresh deadline: the one of its wave,
        // which may be an earlier wave's (a cluster that failed after its wave had passed).
        await tx.rolloutWave.updateMany({
          where: {
            rolloutId: uid,
            index: { in: failed.map((f) => f.wave).filter((w) => w < row.currentWave) },
          },
          data: { deadlineAt },
        });
        // The current wave gets a fresh deadline whatever its state. One that failed (also during
        // its timed pause or approval wait: the driver fails a SUCCEEDED wave too) runs again: it
        // must become healthy once more, then soaks its full pause again and still stops at its
        // approval gate unless that stage was approved. A wave merely paused while SUCCEEDED keeps
        // its persisted resumeAt (docs/ROLLOUTS.md § Pause, resume, abort).
        await tx.rolloutWave.updateMany({
          where: { rolloutId: uid, index: row.currentWave, state: { not: 'PENDING' } },
          data: { deadlineAt },
        });
        await tx.rolloutWave.updateMany({
          where: {
            rolloutId: uid,
            index: row.currentWave,
            // SUCCEEDED with failed clusters: a row failed before the driver failed such waves too.
            state: {
              in: failed.some((f) => f.wave === row.currentWave)
                ? ['FAILED', 'SUCCEEDED']
                : ['FAILED'],
            },
          },
          data: { state: 'RUNNING', finishedAt: null, resumeAt: null },
        });
        // The rollout continues on the resumer's authority: the driver checks this token (and
        // this scope) before each change from now on.
        const token = await tx.apiToken.findUnique({
          where: { id: principal.tokenId },
          select: { labelSelector: true },
        });
        await tx.rollout.update({
          where: { id: uid },
          data: {
            state: 'RUNNING',
            reason: null,
            finishedAt: null,
            createdByTokenId: principal.tokenId,
            scopeSelector: token?.labelSelector ?? null,
          },
        });
      },
    );
  }

  /** Stops for good. Clusters already changed keep the change; nothing is reverted. */
  abort(principal: Principal, uid: string, reason: string | null | undefined): Promise<Rollout> {
    if (reason != null && reason.length > 1000)
      throw userInputError('reason', 'must be no more than 1000 characters');
    return this.steer(principal, uid, 'abortRollout', ACTIVE, async (tx) => {
      const now = new Date();
      await tx.rolloutCluster.updateMany({
        where: { rolloutId: uid, state: 'PENDING' },
        data: { state: 'SKIPPED', reason: 'RolloutAborted', finishedAt: now },
      });
      await tx.rolloutWave.updateMany({
        where: { rolloutId: uid, state: { in: ['PENDING', 'RUNNING'] } },
        data: { state: 'SKIPPED', finishedAt: now },
      });
      await tx.rollout.update({
        where: { id: uid },
        data: {
          state: 'ABORTED',
          finishedAt: now,
          reason: `aborted by ${principal.name}${reason ? `: ${reason}` : ''}`,
        },
      });
    });
  }

  async get(principal: Principal, uid: string): Promise<Rollout> {
    if (!(await this.visible(this.db, principal, uid)))
      throw notFoundError('rollout', toGlobalId('Rollout', uid));
    const row = await this.db.rollout.findUnique({
      where: { id: uid },
      include: {
        waves: { orderBy: { index: 'asc' } },
        clusters: { orderBy: [{ wave: 'asc' }, { clusterName: 'asc' }] },
      },
    });
    if (!row) throw notFoundError('rollout', toGlobalId('Rollout', uid));
    return toRollout(await this.withinScope(principal, row));
  }

  /**
   * The rollout as the reader may see it: only the clusters within its scope (and the counts of
   * those), so a rollout visible through one cluster does not reveal the others.
   */
  private async withinScope<R extends RolloutRow>(principal: Principal, row: R): Promise<R> {
    const rows = await this.withinScopeAll(principal, [row]);
    return rows[0]!;
  }

  private async withinScopeAll<R extends RolloutRow>(
    principal: Principal,
    rows: R[],
  ): Promise<R[]> {
    if (!principal.scope) return rows;
    const ids = [...new Set(rows.flatMap((r) => r.clusters.map((c) => c.clusterId)))];
    const visible = ids.length
      ? await this.db.$queryRaw<{ id: string }[]>`
          SELECT c.id::text AS id FROM "Cluster" c WHERE c.id = ANY(${ids}::uuid[]) AND ${scopeSql(principal)}`
      : [];
    const mine = new Set(visible.map((v) => v.id));
    return rows.map((r) => ({ ...r, clusters: r.clusters.filter((c) => mine.has(c.clusterId)) }));
  }

  /** Newest first; scoped tokens see rollouts that touch at least one of their clusters. */
  async list(
    principal: Principal,
    page: { first?: number | null; after?: string | null },
    state: RolloutState | null | undefined,
  ): Promise<RolloutConnection> {
    const { size } = pageWindow(page);
    const conds: Prisma.Sql[] = [Prisma.sql`TRUE`];
    if (state) conds.push(Prisma.sql`r.state = ${state}::"RolloutState"`);
    if (principal.scope?.length) {
      conds.push(Prisma.sql`EXISTS (SELECT 1 FROM "RolloutCluster" rc JOIN "Cluster" c ON c.id = rc."clusterId"
                                     WHERE rc."rolloutId" = r.id AND ${scopeSql(principal)})`);
    }
    const where = Prisma.join(conds, ' AND ');
    let after = Prisma.empty;
    if (page.after) {
      const [at, id] = decodeCursor(page.after, 'after');
      if (typeof at !== 'string' || !isUuid(id) || Number.isNaN(Date.parse(at))) {
        throw userInputError('after', 'is not a cursor returned by this API');
      }
      after = Prisma.sql`AND (r."createdAt", r.id) < (${new Date(at)}, ${id}::uuid)`;
    }
    const [ids, [{ count }]] = await Promise.all([
      this.db.$queryRaw<{ id: string; createdAt: Date }[]>`
        SELECT r.id, r."createdAt" FROM "Rollout" r WHERE ${where} ${after}
         ORDER BY r."createdAt" DESC, r.id DESC LIMIT ${size + 1}`,
      this.db.$queryRaw<
        [{ count: number }]
      >`SELECT count(*)::int AS count FROM "Rollout" r WHERE ${where}`,
    ]);
    const pageIds = ids.slice(0, size);
    const rows = await this.withinScopeAll(
      principal,
      await this.db.rollout.findMany({
        where: { id: { in: pageIds.map((r) => r.id) } },
        include: {
          waves: { orderBy: { index: 'asc' } },
          clusters: { orderBy: [{ wave: 'asc' }, { clusterName: 'asc' }] },
        },
      }),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const edges = pageIds.flatMap((r) => {
      const row = byId.get(r.id);
      return row
        ? [{ cursor: encodeCursor([r.createdAt.toISOString(), r.id]), node: toRollout(row) }]
        : [];
    });
    return {
      edges,
      nodes: edges.map((e) => e.node),
      pageInfo: {
        hasNextPage: ids.length > size,
        hasPreviousPage: Boolean(page.after),
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
      totalCount: count,
    };
  }

  async visible(db: Tx | PrismaClient, principal: Principal, uid: string): Promise<boolean> {
    const rows = principal.scope?.length
      ? await db.$queryRaw<{ id: string }[]>`
          SELECT r.id FROM "Rollout" r WHERE r.id = ${uid}::uuid AND EXISTS (
            SELECT 1 FROM "RolloutCluster" rc JOIN "Cluster" c ON c.id = rc."clusterId"
             WHERE rc."rolloutId" = r.id AND ${scopeSql(principal)})`
      : await db.$queryRaw<
          { id: string }[]
        >`SELECT r.id FROM "Rollout" r WHERE r.id = ${uid}::uuid`;
    return rows.length > 0;
  }

  private async steer(
    principal: Principal,
    uid: string,
    action: string,
    from: RolloutState[],
    write: (
      tx: Tx,
      row: { state: string; currentWave: number; waveTimeoutSeconds: number },
    ) => Promise<void>,
  ): Promise<Rollout> {
    await this.db.$transaction(async (tx) => {
      const row = await this.lockForSteering(tx, principal, uid, action);
      if (!from.includes(row.state as RolloutState)) {
        throw conflictError(`rollout is ${row.state}; ${action} needs ${from.join(' or ')}`);
      }
      await write(tx, row);
      await this.audit.record(
        tx,
        principal,
        action,
        null,
        { rolloutId: uid, state: row.state },
        { rolloutId: uid },
      );
    });
    await this.changed(uid);
    return this.get(principal, uid);
  }

  /** The rollout's row, locked, once the caller may steer it (every cluster of it in scope). */
  private async lockForSteering(
    tx: Tx,
    principal: Principal,
    uid: string,
    action: string,
  ): Promise<{ state: string; currentWave: number; waveTimeoutSeconds: number }> {
    const rows = await tx.$queryRaw<
      { state: string; currentWave: number; waveTimeoutSeconds: number }[]
    >`
      SELECT state::text AS state, "currentWave", "waveTimeoutSeconds" FROM "Rollout" WHERE id = ${uid}::uuid FOR UPDATE`;
    const row = rows[0];
    if (!row || !(await this.visible(tx, principal, uid)))
      throw notFoundError('rollout', toGlobalId('Rollout', uid));
    if (principal.scope) {
      // Steering acts on every cluster of the rollout: all of them must be the caller's.
      const outside = await tx.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM "RolloutCluster" rc JOIN "Cluster" c ON c.id = rc."clusterId"
         WHERE rc."rolloutId" = ${uid}::uuid AND NOT (${scopeSql(principal)})`;
      if ((outside[0]?.n ?? 0) > 0)
        throw forbiddenError(
          `token ${principal.name} may not ${action} a rollout that includes clusters outside its scope`,
        );
    }
    return row;
  }

  /** Subscribers of every replica learn of it; losing the event costs freshness, never state. */
  private async changed(rolloutId: string): Promise<void> {
    await this.events.publish({ type: 'rollout-changed', rolloutId }).catch(() => undefined);
  }
}

function counts(clusters: readonly { state: string }[]): RolloutCounts {
  const by = (state: RolloutClusterState) =>
    clusters.filter((c) => c.state === (state as string)).length;
  return {
    total: clusters.length,
    pending: by(RolloutClusterState.PENDING),
    applying: by(RolloutClusterState.APPLYING),
    healthy: by(RolloutClusterState.HEALTHY),
    failed: by(RolloutClusterState.FAILED),
    skipped: by(RolloutClusterState.SKIPPED),
  };
}

export function toRollout(row: RolloutRow): Rollout {
  const clusters: RolloutClusterProgress[] = row.clusters.map((c) => ({
    clusterId: toGlobalId('Cluster', c.clusterId),
    clusterUid: c.clusterId,
    clusterName: c.clusterName,
    wave: c.wave,
    state: c.state as RolloutClusterState,
    generation: c.generation,
    reason: c.reason,
    appliedAt: c.appliedAt,
    healthySince: c.healthySince,
    finishedAt: c.finishedAt,
  }));
  return {
    __typename: 'Rollout',
    id: toGlobalId('Rollout', row.id),
    uid: row.id,
    state: row.state as RolloutState,
    reason: row.reason,
    selector: row.selector,
    change: row.change,
    strategy: {
      waves: row.waveSteps,
      name: row.strategyName,
      minHealthySeconds: row.minHealthySeconds,
      maxFailures: row.maxFailures,
      waveTimeoutSeconds: row.waveTimeoutSeconds,
      maxNodeClaimLaunchFailures: row.maxNodeClaimLaunchFailures,
      maxPendingPodSeconds: row.maxPendingPodSeconds,
    },
    currentWave: row.currentWave,
    waitingStage: row.state === 'WAITING_APPROVAL' ? row.currentWave : null,
    counts: counts(clusters),
    waves: row.waves.map((w) => {
      const mine = clusters.filter((c) => c.wave === w.index);
      return {
        index: w.index,
        state: w.state as RolloutWaveState,
        counts: counts(mine),
        startedAt: w.startedAt,
        deadlineAt: w.deadlineAt,
        finishedAt: w.finishedAt,
        selector: w.selector,
        minHealthySeconds: w.minHealthySeconds ?? row.minHealthySeconds,
        pauseSeconds: w.pauseSeconds,
        approval: w.approval,
        resumeAt: w.resumeAt,
        approvedAt: w.approvedAt,
        approvedBy: w.approvedBy,
        clusters: mine,
      };
    }),
    planId: row.planId,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    finishedAt: row.finishedAt,
  };
}

import {
  type ClusterMetrics,
  matchesLabelSelector,
  parseLabelSelector,
  type ReconcileRequest,
} from '@fleet/contracts';
import type { Prisma, PrismaClient } from '@fleet/database';
import {
  applyDesiredStateChange,
  unsupportedChange,
  commitDesiredStateChange,
  DesiredStateChange,
  evaluateHealth,
  karpenterGateViolation,
  lockDesiredState,
  materializeEffectiveState,
  syncProfileBinding,
} from '@fleet/desired-state';

type Tx = Prisma.TransactionClient;
type RolloutRow = Prisma.RolloutGetPayload<{ include: { waves: true } }>;
type RolloutClusterRow = Prisma.RolloutClusterGetPayload<object>;

export interface RolloutDriverOptions {
  staleAfterSeconds: number;
  /** Clusters applied per rollout per tick: keeps each tick's transaction short. */
  applyBatch?: number;
}

interface Outcome {
  changed: boolean;
  reconciles: ReconcileRequest[];
}

const conditionMessage = (conditions: unknown, type: string): string => {
  const found = (
    conditions as { type: string; status: string; reason?: string; message?: string }[]
  ).find((c) => c.type === type && c.status === 'True');
  return found
    ? `${found.reason ?? ''}${found.message ? `: ${found.message}` : ''}`.slice(0, 900)
    : '';
};

/**
 * Drives every RUNNING rollout one step per tick. Everything is re-read from PostgreSQL each
 * time, and each rollout advances in one transaction that holds its row lock (SKIP LOCKED, so
 * several workers never drive the same rollout at once and a pause/abort waits for the tick to
 * finish). A restarted worker therefore simply continues. See docs/ROLLOUTS.md.
 */
export class RolloutDriver {
  private readonly applyBatch: number;

  constructor(
    private readonly db: PrismaClient,
    private readonly options: RolloutDriverOptions,
    private readonly requestReconcile: (requests: ReconcileRequest[]) => Promise<void>,
    private readonly publishChanged: (rolloutId: string) => Promise<void>,
  ) {
    this.applyBatch = options.applyBatch ?? 50;
  }

  async tick(): Promise<number> {
    const running = await this.db.rollout.findMany({
      // A rollout waiting for approval is still watched: a cluster failing meanwhile stops it.
      where: { state: { in: ['RUNNING', 'WAITING_APPROVAL'] } },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    });
    let advanced = 0;
    for (const { id } of running) {
      if (await this.advance(id)) advanced++;
    }
    return advanced;
  }

  /** One step of one rollout; true when anything changed. */
  async advance(rolloutId: string): Promise<boolean> {
    const outcome = await this.db.$transaction(
      async (tx): Promise<Outcome> => {
        const locked = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM "Rollout" WHERE id = ${rolloutId}::uuid AND state IN ('RUNNING', 'WAITING_APPROVAL')
           FOR UPDATE SKIP LOCKED`;
        const result: Outcome = { changed: false, reconciles: [] };
        if (!locked.length) return result;
        const rollout = await tx.rollout.findUniqueOrThrow({
          where: { id: rolloutId },
          include: { waves: { orderBy: { index: 'asc' } } },
        });
        await this.step(tx, rollout, new Date(), result);
        return result;
      },
      { timeout: 30_000, maxWait: 10_000 },
    );
    // After commit: if Redis is away now, the resync dispatches from generation > observedGeneration.
    await this.requestReconcile(outcome.reconciles);
    if (outcome.changed) await this.publishChanged(rolloutId);
    return outcome.changed;
  }

  private async step(tx: Tx, rollout: RolloutRow, now: Date, out: Outcome): Promise<void> {
    await this.watchApplied(tx, rollout, now, out);

    const failed = await tx.rolloutCluster.findMany({
      where: { rolloutId: rollout.id, state: 'FAILED' },
      select: { clusterName: true, reason: true },
      orderBy: { clusterName: 'asc' },
    });
    if (failed.length > rollout.maxFailures) {
      const list = failed
        .slice(0, 5)
        .map((f) => `${f.clusterName} (${f.reason ?? 'failed'})`)
        .join(', ');
      await tx.rollout.update({
        where: { id: rollout.id },
        data: {
          state: 'FAILED',
          finishedAt: now,
          reason:
            `TooManyFailures: ${failed.length} clusters failed, more than maxFailures ${rollout.maxFailures}: ${list}${failed.length > 5 ? ', …' : ''}`.slice(
              0,
              2048,
            ),
        },
      });
      // A wave that had succeeded (the rollout in its timed pause or waiting for approval) fails
      // too: its clusters are what failed, and resumeRollout must run it again, not jump its gate.
      await tx.rolloutWave.updateMany({
        where: {
          rolloutId: rollout.id,
          index: rollout.currentWave,
          state: { in: ['RUNNING', 'SUCCEEDED'] },
        },
        data: { state: 'FAILED', finishedAt: now, resumeAt: null },
      });
      out.changed = true;
      return;
    }

    // Only approveRolloutStage moves it on (to RUNNING); until then health alone is judged.
    if (rollout.state === 'WAITING_APPROVAL') return;
    const wave = rollout.waves[rollout.currentWave];
    if (!wave) return;
    if (wave.state === 'PENDING') {
      await tx.rolloutWave.update({
        where: { rolloutId_index: { rolloutId: rollout.id, index: wave.index } },
        data: {
          state: 'RUNNING',
          startedAt: now,
          deadlineAt: new Date(now.getTime() + rollout.waveTimeoutSeconds * 1000),
        },
      });
      out.changed = true;
    }

    const pending = await tx.rolloutCluster.findMany({
      where: { rolloutId: rollout.id, wave: wave.index, state: 'PENDING' },
      orderBy: { clusterName: 'asc' },
      take: this.applyBatch,
    });
    if (pending.length) {
      // Each change is made on the starter's authority: a token revoked or expired since the
      // start changes nothing more. Paused (not failed) so that someone entitled can resume it.
      const refusal = await starterRefusal(tx, rollout.createdByTokenId, now);
      if (refusal) {
        await tx.rollout.update({
          where: { id: rollout.id },
          data: {
            state: 'PAUSED',
            reason: `StarterTokenInvalid: ${refusal}; resume to continue on your authority`,
          },
        });
        out.changed = true;
        return;
      }
      await this.apply(tx, rollout, pending, now, out);
      return;
    }

    const open = await tx.rolloutCluster.count({
      where: { rolloutId: rollout.id, wave: wave.index, state: { in: ['PENDING', 'APPLYING'] } },
    });
    if (open > 0) return;
    const last = rollout.currentWave >= rollout.waves.length - 1;
    let resumeAt = wave.resumeAt;
    if (wave.state !== 'SUCCEEDED') {
      // The timed pause counts from the moment the wave succeeded, persisted with it so that a
      // restarted worker resumes on time. Gates after the last wave hold nothing.
      resumeAt =
        !last && wave.pauseSeconds > 0 ? new Date(now.getTime() + wave.pauseSeconds * 1000) : null;
      await tx.rolloutWave.update({
        where: { rolloutId_index: { rolloutId: rollout.id, index: wave.index } },
        data: { state: 'SUCCEEDED', finishedAt: now, resumeAt },
      });
      out.changed = true;
    }
    if (last) {
      await tx.rollout.update({
        where: { id: rollout.id },
        data: {
          state: 'COMPLETED',
          finishedAt: now,
          reason: failed.length
            ? `completed with ${failed.length} failed clusters (maxFailures ${rollout.maxFailures})`
            : null,
        },
      });
      out.changed = true;
      return;
    }
    // Timed pause first (the stage soaks), then the approval gate: the approver sees a stage
    // that stayed healthy through its pause.
    if (resumeAt && now < resumeAt) {
      const reason = `PausedAfterStage: wave ${wave.index} healthy, wave ${wave.index + 1} starts at ${resumeAt.toISOString()}`;
      if (rollout.reason !== reason) {
        await tx.rollout.update({ where: { id: rollout.id }, data: { reason } });
        out.changed = true;
      }
      return;
    }
    if (wave.approval && !wave.approvedAt) {
      await tx.rollout.update({
        where: { id: rollout.id },
        data: {
          state: 'WAITING_APPROVAL',
          reason: `WaitingForApproval: wave ${wave.index} healthy; approveRolloutStage(stage: ${wave.index}) starts wave ${wave.index + 1}`,
        },
      });
      out.changed = true;
      return;
    }
    await tx.rollout.update({
      where: { id: rollout.id },
      data: { currentWave: rollout.currentWave + 1, reason: null },
    });
    out.changed = true;
  }

  /** Health of every cluster the rollout has changed: healthy streaks, failures, wave timeouts. */
  private async watchApplied(tx: Tx, rollout: RolloutRow, now: Date, out: Outcome): Promise<void> {
    const applied = await tx.rolloutCluster.findMany({
      where: { rolloutId: rollout.id, state: { in: ['APPLYING', 'HEALTHY'] } },
    });
    if (!applied.length) return;
    const statuses = await tx.clusterStatus.findMany({
      where: { clusterId: { in: applied.map((c) => c.clusterId) } },
    });
    const byId = new Map(statuses.map((s) => [s.clusterId, s]));
    for (const rc of applied) {
      const update = (data: Prisma.RolloutClusterUpdateInput) => {
        out.changed = true;
        return tx.rolloutCluster.update({
          where: { rolloutId_clusterId: { rolloutId: rollout.id, clusterId: rc.clusterId } },
          data,
        });
      };
      const status = byId.get(rc.clusterId);
      if (!status) {
        await update({
          state: 'SKIPPED',
          reason: 'ClusterDeregistered',
          finishedAt: now,
          healthySince: null,
        });
        continue;
      }
      const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as {
        type: string;
        status: string;
      }[];
      const health = evaluateHealth(
        { ...status, conditions },
        rc.generation ?? 0,
        now,
        this.options.staleAfterSeconds,
      );
      // Karpenter's own signals, once the cluster runs the change (as Degraded is judged): a
      // cluster still at its old generation has not taken it, so its failures are not the change's.
      if (
        (health === 'healthy' || health === 'waiting') &&
        status.observedGeneration >= (rc.generation ?? 0)
      ) {
        // Each gate's metrics are read on their own: one malformed metric blinds neither gate.
        const violation = karpenterGateViolation(status.metrics as ClusterMetrics, rollout, {
          now,
          appliedAt: rc.appliedAt,
          reportedAt: status.lastReportAt,
        });
        if (violation) {
          await update({
            state: 'FAILED',
            healthySince: null,
            finishedAt: now,
            reason: violation.slice(0, 1024),
          });
          continue;
        }
      }
      switch (health) {
        case 'healthy': {
          const since = rc.healthySince ?? now;
          const minHealthySeconds =
            rollout.waves[rc.wave]?.minHealthySeconds ?? rollout.minHealthySeconds;
          const held = now.getTime() - since.getTime() >= minHealthySeconds * 1000;
          if (rc.state === 'APPLYING' && held)
            await update({ state: 'HEALTHY', healthySince: since, finishedAt: now, reason: null });
          else if (!rc.healthySince) await update({ healthySince: since });
          break;
        }
        case 'degraded':
          await update({
            state: 'FAILED',
            healthySince: null,
            finishedAt: now,
            reason: `Degraded${conditionMessage(status.conditions, 'Degraded') ? `: ${conditionMessage(status.conditions, 'Degraded')}` : ''}`,
          });
          break;
        case 'stale':
          await update({
            state: 'FAILED',
            healthySince: null,
            finishedAt: now,
            reason: `Stale: no report for more than ${this.options.staleAfterSeconds}s`,
          });
          break;
        case 'waiting': {
          // A cluster that passed keeps HEALTHY; only Degraded or Stale fail it afterwards.
          if (rc.state === 'HEALTHY') break;
          const deadline = rollout.waves[rc.wave]?.deadlineAt;
          if (deadline && now > deadline) {
            await update({
              state: 'FAILED',
              healthySince: null,
              finishedAt: now,
              reason: `WaveTimeout: not healthy at generation ${rc.generation ?? '?'} within ${rollout.waveTimeoutSeconds}s`,
            });
          } else if (rc.healthySince) {
            await update({ healthySince: null });
          }
          break;
        }
      }
    }
  }

  /** Applies the rollout's change to a batch of the current wave through the shared desired-state path. */
  private async apply(
    tx: Tx,
    rollout: RolloutRow,
    batch: RolloutClusterRow[],
    now: Date,
    out: Outcome,
  ): Promise<void> {
    if (rollout.profileId != null && rollout.profileRevision != null)
      return this.applyProfile(
        tx,
        rollout,
        rollout.profileId,
        rollout.profileRevision,
        batch,
        now,
        out,
      );
    const change = DesiredStateChange.parse(rollout.change);
    const selector = parseLabelSelector(rollout.selector);
    const scope = rollout.scopeSelector ? parseLabelSelector(rollout.scopeSelector) : [];
    const actor = { name: `rollout:${rollout.id}`, tokenId: rollout.createdByTokenId };
    for (const rc of batch) {
      const where = { rolloutId_clusterId: { rolloutId: rollout.id, clusterId: rc.clusterId } };
      const skip = (reason: string) =>
        tx.rolloutCluster.update({ where, data: { state: 'SKIPPED', reason, finishedAt: now } });
      out.changed = true;
      const current = await lockDesiredState(tx, rc.clusterId);
      if (current === undefined) {
        await skip('ClusterDeregistered');
        continue;
      }
      // A rollout from a plan applies what was planned, as applyPlan does: a cluster whose
      // desired state moved since is not changed on a preview that is no longer true.
      if (rc.planGeneration != null && current !== rc.planGeneration) {
        await skip(
          `DesiredStateMoved: at generation ${current}, not the ${rc.planGeneration} the plan was computed against`,
        );
        continue;
      }
      const cluster = await tx.cluster.findUniqueOrThrow({
        where: { id: rc.clusterId },
        select: { labels: true, platform: true, topology: true, managementCluster: true },
      });
      const labels = (cluster.labels ?? {}) as Record<string, string>;
      // Labels may have changed since the start: a cluster that left the selection (or the
      // starting token's scope) is not changed behind its owner's back.
      if (!matchesLabelSelector(selector, labels) || !matchesLabelSelector(scope, labels)) {
        await skip('NoLongerSelected: its labels no longer match the selector or the scope');
        continue;
      }
      const refusal = unsupportedChange(cluster, change);
      if (refusal) {
        await skip(`UnsupportedForTopology: ${refusal.field}: ${refusal.reason}`);
        continue;
      }
      if (change.deleteNodePool) {
        const exists = await tx.nodePool.count({
          where: { clusterId: rc.clusterId, name: change.deleteNodePool },
        });
        if (!exists) {
          await skip(`NodePoolAbsent: no NodePool ${change.deleteNodePool} to delete`);
          continue;
        }
      }
      const generation = await commitDesiredStateChange(tx, {
        clusterId: rc.clusterId,
        actor,
        action: 'applyRollout',
        change: async (t) => {
          await applyDesiredStateChange(t, rc.clusterId, change);
        },
      });
      await tx.rolloutCluster.update({
        where,
        data: { state: 'APPLYING', generation, appliedAt: now, healthySince: null, reason: null },
      });
      out.reconciles.push({ clusterId: rc.clusterId, generation });
    }
  }

  /**
   * A profile's rollout on a batch (docs/PROFILES.md § Rollouts): each cluster is bound to the
   * rollout's revision of the profile if its labels match that revision's selector now, unbound
   * otherwise (the profile deleted or the cluster relabelled away), and its effective state
   * re-materialized — one generation, one order, through the shared desired-state path. Unlike
   * a change rollout, a cluster that no longer matches is not skipped: leaving is the change.
   */
  private async applyProfile(
    tx: Tx,
    rollout: RolloutRow,
    profileId: string,
    revision: number,
    batch: RolloutClusterRow[],
    now: Date,
    out: Outcome,
  ): Promise<void> {
    const scope = rollout.scopeSelector ? parseLabelSelector(rollout.scopeSelector) : [];
    const actor = { name: `rollout:${rollout.id}`, tokenId: rollout.createdByTokenId };
    for (const rc of batch) {
      const where = { rolloutId_clusterId: { rolloutId: rollout.id, clusterId: rc.clusterId } };
      out.changed = true;
      if ((await lockDesiredState(tx, rc.clusterId)) === undefined) {
        await tx.rolloutCluster.update({
          where,
          data: { state: 'SKIPPED', reason: 'ClusterDeregistered', finishedAt: now },
        });
        continue;
      }
      const { labels } = await tx.cluster.findUniqueOrThrow({
        where: { id: rc.clusterId },
        select: { labels: true },
      });
      if (!matchesLabelSelector(scope, (labels ?? {}) as Record<string, string>)) {
        await tx.rolloutCluster.update({
          where,
          data: {
            state: 'SKIPPED',
            reason: "NoLongerSelected: its labels no longer match the starting token's scope",
            finishedAt: now,
          },
        });
        continue;
      }
      const generation = await commitDesiredStateChange(tx, {
        clusterId: rc.clusterId,
        actor,
        action: 'applyProfileRollout',
        change: async (t) => {
          await syncProfileBinding(t, rc.clusterId, profileId, revision);
          await materializeEffectiveState(t, rc.clusterId);
        },
      });
      await tx.rolloutCluster.update({
        where,
        data: { state: 'APPLYING', generation, appliedAt: now, healthySince: null, reason: null },
      });
      out.reconciles.push({ clusterId: rc.clusterId, generation });
    }
    // A deleted profile goes once no cluster is bound to it any more.
    const profile = await tx.profile.findUnique({
      where: { id: profileId },
      select: { deletedAt: true, _count: { select: { bindings: true } } },
    });
    if (profile?.deletedAt && profile._count.bindings === 0)
      await tx.profile.delete({ where: { id: profileId } });
  }
}

/** Why the token that started a rollout may no longer act, or undefined when it still may. */
async function starterRefusal(
  tx: Tx,
  tokenId: string | null,
  now: Date,
): Promise<string | undefined> {
  // Rollouts from before tokens were recorded, or whose token row was deleted, have no starter to check.
  if (!tokenId) return undefined;
  const token = await tx.apiToken.findUnique({
    where: { id: tokenId },
    select: { name: true, revokedAt: true, expiresAt: true },
  });
  if (!token) return 'the token that started it no longer exists';
  if (token.revokedAt)
    return `the token that started it (${token.name}) was revoked at ${token.revokedAt.toISOString()}`;
  if (token.expiresAt && token.expiresAt <= now)
    return `the token that started it (${token.name}) expired at ${token.expiresAt.toISOString()}`;
  return undefined;
}

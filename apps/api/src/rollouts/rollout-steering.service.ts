import { Injectable } from '@nestjs/common';
import { type PrismaClient } from '@fleet/database';
import { AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { conflictError, forbiddenError, notFoundError, userInputError } from '../common/errors.js';
import { toGlobalId } from '../common/global-id.js';
import { PrismaService } from '../database/prisma.service.js';
import { RolloutState } from './models/rollout.model.js';
import { ACTIVE, scopeSql, type Tx } from './rollout-access.js';
import { RolloutQueries } from './rollout-queries.service.js';

type SteeredRow = { state: string; currentWave: number; waveTimeoutSeconds: number };

/**
 * Steering a started rollout: pause, approve a stage, resume, abort. Every write takes the
 * rollout's row lock, which the worker's driver tick also holds, so a pause never lands in the
 * middle of a step. RolloutsService announces each change once committed.
 */
@Injectable()
export class RolloutSteering {
  private readonly db: PrismaClient;

  constructor(
    prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly queries: RolloutQueries,
  ) {
    this.db = prisma.client;
  }

  pause(principal: Principal, uid: string): Promise<void> {
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
  async approve(principal: Principal, uid: string, stage: number): Promise<boolean> {
    if (!Number.isInteger(stage) || stage < 0)
      throw userInputError('stage', 'must be a wave index (0 or more)');
    return this.db.$transaction(async (tx) => {
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
  }

  /**
   * Continues a PAUSED or FAILED rollout. Failed clusters are watched again (not re-applied: the
   * change is already their desired state) and the current wave gets a fresh deadline.
   */
  resume(principal: Principal, uid: string): Promise<void> {
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
  abort(principal: Principal, uid: string, reason: string | null | undefined): Promise<void> {
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

  private async steer(
    principal: Principal,
    uid: string,
    action: string,
    from: RolloutState[],
    write: (tx: Tx, row: SteeredRow) => Promise<void>,
  ): Promise<void> {
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
  }

  /** The rollout's row, locked, once the caller may steer it (every cluster of it in scope). */
  private async lockForSteering(
    tx: Tx,
    principal: Principal,
    uid: string,
    action: string,
  ): Promise<SteeredRow> {
    const rows = await tx.$queryRaw<SteeredRow[]>`
      SELECT state::text AS state, "currentWave", "waveTimeoutSeconds" FROM "Rollout" WHERE id = ${uid}::uuid FOR UPDATE`;
    const row = rows[0];
    if (!row || !(await this.queries.visible(tx, principal, uid)))
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
}

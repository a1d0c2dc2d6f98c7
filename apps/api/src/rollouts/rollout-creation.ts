import { Prisma } from '@fleet/database';
import { planStages, UnheldApprovalGate } from '@fleet/desired-state';
import type { AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { conflictError, userInputError } from '../common/errors.js';
import { toGlobalId } from '../common/global-id.js';
import { ACTIVE, type Labels, type Tx } from './rollout-access.js';
import type { ResolvedStrategy } from './rollout-strategy.js';

/** The rollout row, its waves and clusters, once the clusters are chosen (inside the start lock). */
export async function createRollout(
  tx: Tx,
  audit: AuditService,
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
  await audit.record(tx, principal, 'startRollout', null, null, {
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

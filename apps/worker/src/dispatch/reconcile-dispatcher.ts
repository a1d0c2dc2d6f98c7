import type { Condition, ReconcileRequest } from '@fleet/contracts';
import type { PrismaClient } from '@fleet/database';
import { conditionChanges, withCondition } from '../conditions/fleet-conditions.js';
import {
  BUILT_IN_OPERAND_DEFAULT,
  buildOrder,
  sidecarReads,
  type OperandDefault,
} from './order.js';
import type { SidecarQueues } from './sidecar-queues.js';

export type DispatchOutcome = 'dispatched' | 'in-sync' | 'unknown-cluster' | 'sidecar-outdated';

/**
 * Turns "bring cluster X to generation N" into an order carrying the whole desired state as it
 * is now. Requests for older generations dispatch the newest one, so a burst of mutations
 * collapses into the latest order.
 */
export class ReconcileDispatcher {
  constructor(
    private readonly db: PrismaClient,
    private readonly sidecarQueues: SidecarQueues,
    private readonly operandDefault: OperandDefault = BUILT_IN_OPERAND_DEFAULT,
  ) {}

  async dispatch(request: ReconcileRequest): Promise<DispatchOutcome> {
    const cluster = await this.db.cluster.findUnique({
      where: { id: request.clusterId },
      include: { desired: true, status: true, nodePools: { orderBy: { name: 'asc' } } },
    });
    if (!cluster?.desired || !cluster.status) return 'unknown-cluster';
    const { desired } = cluster;
    if (!request.force && cluster.status.observedGeneration >= desired.generation) return 'in-sync';

    const order = buildOrder(
      {
        ...desired,
        clusterId: cluster.id,
        platform: cluster.platform,
        topology: cluster.topology,
        nodePools: cluster.nodePools.map((p) => ({ name: p.name, spec: p.spec })),
      },
      this.operandDefault,
    );
    // A sidecar that reported an older contract would misread the order (a contract-1 sidecar
    // runs the standalone AWS logic whatever the platform), so the order is not sent.
    const speaks = cluster.status.sidecarContractVersion;
    if (speaks !== null && !sidecarReads(speaks, order)) {
      await this.refuseOutdated(cluster.id, desired.generation, speaks, order.contractVersion);
      return 'sidecar-outdated';
    }
    await this.sidecarQueues.push(order, { force: request.force ?? false });
    // Only an open run becomes DISPATCHED: a report may have made it APPLIED since we looked.
    await this.db.$transaction([
      lockClusterStatus(this.db, cluster.id),
      this.db.reconcileRun.updateMany({
        where: {
          clusterId: cluster.id,
          generation: { lt: desired.generation },
          state: { in: ['QUEUED', 'DISPATCHED'] },
        },
        data: { state: 'SUPERSEDED', finishedAt: new Date() },
      }),
      this.db.$executeRaw`
        INSERT INTO "ReconcileRun" (id, "clusterId", generation, state, "dispatchedAt")
        VALUES (gen_random_uuid(), ${cluster.id}::uuid, ${desired.generation}, 'DISPATCHED', now())
        ON CONFLICT ("clusterId", generation) DO UPDATE
           SET state = 'DISPATCHED', "dispatchedAt" = COALESCE("ReconcileRun"."dispatchedAt", now())
         WHERE "ReconcileRun".state IN ('QUEUED', 'DISPATCHED')`,
    ]);
    return 'dispatched';
  }

  /**
   * The run of the generation is FAILED with the reason, and the cluster carries the fleet-side
   * condition SidecarOutdated until its sidecar reports a contract new enough (then the resync
   * sends the order).
   */
  private async refuseOutdated(
    clusterId: string,
    generation: number,
    speaks: number,
    needs: number,
  ): Promise<void> {
    const message = `the sidecar speaks order contract ${speaks}; this order needs contract ${needs}: upgrade the sidecar`;
    const at = new Date();
    await this.db.$transaction(async (tx) => {
      await lockClusterStatus(tx, clusterId);
      await tx.reconcileRun.updateMany({
        where: {
          clusterId,
          generation: { lt: generation },
          state: { in: ['QUEUED', 'DISPATCHED'] },
        },
        data: { state: 'SUPERSEDED', finishedAt: at },
      });
      await tx.$executeRaw`
        INSERT INTO "ReconcileRun" (id, "clusterId", generation, state, error, "finishedAt")
        VALUES (gen_random_uuid(), ${clusterId}::uuid, ${generation}, 'FAILED', ${message}, ${at})
        ON CONFLICT ("clusterId", generation) DO UPDATE
           SET state = 'FAILED', error = EXCLUDED.error, "finishedAt" = EXCLUDED."finishedAt"
         WHERE "ReconcileRun".state IN ('QUEUED', 'DISPATCHED')`;
      const status = await tx.clusterStatus.findUniqueOrThrow({ where: { clusterId } });
      const before = status.conditions as unknown as Condition[];
      const after = withCondition(
        before,
        { type: 'SidecarOutdated', status: 'True', reason: 'ContractTooOld', message },
        at.toISOString(),
      );
      await tx.clusterStatus.update({
        where: { clusterId },
        data: { conditions: after },
      });
      const changes = conditionChanges(before, after, at.toISOString());
      if (changes.length) {
        await tx.conditionTransition.createMany({
          data: changes.map((c) => ({ ...c, clusterId, at: new Date(c.at) })),
        });
      }
    });
  }

  /** Dispatch gave up (attempts exhausted): the run is FAILED, with the reason, in PostgreSQL. */
  async markFailed(request: ReconcileRequest, reason: string): Promise<void> {
    await this.db.reconcileRun.updateMany({
      where: {
        clusterId: request.clusterId,
        generation: request.generation,
        state: { in: ['QUEUED', 'DISPATCHED'] },
      },
      data: {
        state: 'FAILED',
        error: `dispatch failed: ${reason}`.slice(0, 4096),
        finishedAt: new Date(),
      },
    });
  }
}

/**
 * Every writer of a cluster's runs holds its status row first (the report batch writer, the
 * resync and the staleness sweep take them in id order): touching the runs in different orders
 * without it deadlocks.
 */
function lockClusterStatus(db: Pick<PrismaClient, '$queryRaw'>, clusterId: string) {
  return db.$queryRaw`SELECT 1 FROM "ClusterStatus" WHERE "clusterId" = ${clusterId}::uuid FOR UPDATE`;
}

import type { ReconcileRequest } from '@fleet/contracts';
import type { PrismaClient } from '@fleet/database';
import { buildOrder } from './order.js';
import type { SidecarQueues } from './sidecar-queues.js';

export type DispatchOutcome = 'dispatched' | 'in-sync' | 'unknown-cluster';

/**
 * Turns "bring cluster X to generation N" into an order carrying the whole desired state as it
 * is now. Requests for older generations dispatch the newest one, so a burst of mutations
 * collapses into the latest order.
 */
export class ReconcileDispatcher {
  constructor(
    private readonly db: PrismaClient,
    private readonly sidecarQueues: SidecarQueues,
  ) {}

  async dispatch(request: ReconcileRequest): Promise<DispatchOutcome> {
    const cluster = await this.db.cluster.findUnique({
      where: { id: request.clusterId },
      include: { desired: true, status: true, nodePools: { orderBy: { name: 'asc' } } },
    });
    if (!cluster?.desired || !cluster.status) return 'unknown-cluster';
    const { desired } = cluster;
    if (!request.force && cluster.status.observedGeneration >= desired.generation) return 'in-sync';

    const order = buildOrder({
      ...desired,
      clusterId: cluster.id,
      platform: cluster.platform,
      topology: cluster.topology,
      nodePools: cluster.nodePools.map((p) => ({ name: p.name, spec: p.spec })),
    });
    await this.sidecarQueues.push(order, { force: request.force ?? false });
    // Only an open run becomes DISPATCHED: a report may have made it APPLIED since we looked.
    await this.db.$transaction([
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

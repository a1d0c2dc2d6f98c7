import { ChangePlanClusterState, type PrismaClient } from '@fleet/database';
import { proposeDesiredState, type DesiredStateChange } from '@fleet/desired-state';
import type { Logger } from 'pino';
import {
  BUILT_IN_OPERAND_DEFAULT,
  buildOrder,
  sidecarReads,
  type OperandDefault,
} from './order.js';
import type { SidecarQueues } from './sidecar-queues.js';

/**
 * Turns a plan into plan orders: for each of its PENDING clusters, the desired state as stored
 * with the plan's change applied in memory (the same rules as the change itself), built into an
 * order exactly as a reconcile would build it, at the next generation. A cluster whose desired
 * state moved since the plan was made, or whose sidecar cannot read the order, is NOT_PLANNED
 * with the reason; nothing in desired state moves.
 */
export class PlanDispatcher {
  constructor(
    private readonly db: PrismaClient,
    private readonly sidecarQueues: SidecarQueues,
    private readonly log: Logger,
    private readonly operandDefault: OperandDefault = BUILT_IN_OPERAND_DEFAULT,
  ) {}

  async dispatch(planId: string): Promise<{ sent: number; notPlanned: number }> {
    const plan = await this.db.changePlan.findUnique({
      where: { id: planId },
      include: { clusters: { where: { state: ChangePlanClusterState.PENDING } } },
    });
    if (!plan) return { sent: 0, notPlanned: 0 };
    const change = plan.change as DesiredStateChange;
    let sent = 0;
    let notPlanned = 0;
    for (const entry of plan.clusters) {
      const close = async (state: ChangePlanClusterState, reason: string, message: string) => {
        notPlanned++;
        await this.db.changePlanCluster.updateMany({
          where: { planId, clusterId: entry.clusterId, state: ChangePlanClusterState.PENDING },
          data: { state, reason, message, completedAt: new Date() },
        });
      };
      const cluster = await this.db.cluster.findUnique({
        where: { id: entry.clusterId },
        include: { desired: true, status: true, nodePools: { orderBy: { name: 'asc' } } },
      });
      if (!cluster?.desired) continue; // deregistered: its entry went with it
      if (cluster.desired.generation !== entry.generation) {
        await close(
          ChangePlanClusterState.NOT_PLANNED,
          'DesiredStateMoved',
          `desired state moved to generation ${cluster.desired.generation} after the plan was made at ${entry.generation}`,
        );
        continue;
      }
      let order;
      try {
        const proposed = proposeDesiredState(
          {
            ...cluster.desired,
            nodePools: cluster.nodePools.map((p) => ({ name: p.name, spec: p.spec })),
          },
          change,
        );
        order = buildOrder(
          {
            ...proposed,
            nodeClassOverrides: cluster.desired.nodeClassOverrides,
            clusterId: cluster.id,
            generation: entry.generation + 1,
            platform: cluster.platform,
            topology: cluster.topology,
          },
          this.operandDefault,
        );
      } catch (err) {
        await close(
          ChangePlanClusterState.FAILED,
          'InvalidDesiredState',
          err instanceof Error ? err.message : String(err),
        );
        continue;
      }
      const speaks = cluster.status?.sidecarContractVersion ?? null;
      if (speaks !== null && !sidecarReads(speaks, order)) {
        await close(
          ChangePlanClusterState.NOT_PLANNED,
          'SidecarOutdated',
          `the sidecar speaks order contract ${speaks}; this order needs contract ${order.contractVersion}`,
        );
        continue;
      }
      await this.sidecarQueues.pushPlan({ planId, order });
      sent++;
    }
    this.log.debug({ planId, sent, notPlanned }, 'plan dispatched');
    return { sent, notPlanned };
  }
}

import {
  isRedisCluster,
  keySlot,
  PLAN_JOB_NAME,
  planJobId,
  sidecarQueueName,
  type PlanOrder,
  type ReconcileOrder,
  type RedisClient,
} from '@fleet/contracts';
import { FlowProducer, Queue, type JobsOptions } from 'bullmq';

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

const orderJobId = (generation: number) => `generation-${generation}`;
/**
 * How an order job is kept: a failed apply is retried by the sidecar's worker with exponential
 * backoff and jitter; a few finished jobs stay so a re-sent order of the same generation is a no-op.
 */
export const orderJobOptions = (jobId: string): JobsOptions => ({
  jobId,
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000, jitter: 0.5 },
  removeOnComplete: { count: 10 },
  removeOnFail: { count: 100 },
});
/** The generation of an order's job; NaN for any other job on the queue (plans). */
const generationOf = (jobId: string | undefined) =>
  jobId?.startsWith('generation-')
    ? Number.parseInt(jobId.slice('generation-'.length), 10)
    : Number.NaN;

/**
 * The per-cluster order queues. Queue objects are cheap but not free, so the most recently used
 * ones are kept; all share one Redis connection.
 */
export class SidecarQueues {
  private readonly queues = new Map<string, Queue<ReconcileOrder>>();
  private flows: FlowProducer | undefined;

  constructor(
    private readonly connection: RedisClient,
    private readonly prefix: string,
    private readonly maxOpen = 2000,
  ) {}

  /**
   * Puts the order on the cluster's queue; the job ID is the generation, so a retried dispatch
   * cannot deliver twice. Older orders still waiting are removed: per cluster at most one order
   * waits (the newest) and one runs.
   */
  async push(order: ReconcileOrder, { force = false } = {}): Promise<void> {
    const queue = this.queue(order.clusterId);
    // A forced re-send must not collide with the (completed) job of the same generation.
    await queue.add(
      'order',
      order,
      orderJobOptions(
        force
          ? `${orderJobId(order.generation)}-forced-${Date.now()}`
          : orderJobId(order.generation),
      ),
    );
    const waiting = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
    await Promise.all(
      waiting
        .filter((job) => generationOf(job.id) < order.generation)
        .map((job) => job.remove().catch(() => undefined)), // taken by the sidecar meanwhile
    );
  }

  /**
   * Puts a plan order on the cluster's queue: its own job name and ID (`plan-<planId>`), so it
   * never replaces or is replaced by an order, and a retried dispatch cannot deliver it twice.
   */
  async pushPlan(plan: PlanOrder): Promise<void> {
    const queue = this.queue(plan.order.clusterId) as unknown as Queue<PlanOrder>;
    await queue.add(PLAN_JOB_NAME, plan, {
      ...orderJobOptions(planJobId(plan.planId)),
      attempts: 2,
    });
  }

  /**
   * Puts many orders on their clusters' queues. Same job IDs as `push`: an order already there,
   * waiting or done, is not added again.
   *
   * One server: one round trip per batch (BullMQ's multi-queue addBulk, one MULTI). A Redis
   * Cluster refuses a MULTI whose keys span slots (CROSSSLOT), and each cluster's queue is a slot
   * of its own (hash tag), so the batch is split into one addBulk per slot, all sent at once:
   * ioredis writes them back to back on each node's connection, still no round trip per order.
   */
  async pushMany(orders: readonly ReconcileOrder[]): Promise<void> {
    if (!orders.length) return;
    this.flows ??= new FlowProducer({ connection: this.connection, prefix: this.prefix });
    const flows = this.flows;
    const jobs = orders.map((order) => ({
      name: 'order',
      queueName: sidecarQueueName(order.clusterId),
      data: order,
      opts: orderJobOptions(orderJobId(order.generation)),
    }));
    if (!isRedisCluster(this.connection)) {
      await flows.addBulk(jobs);
      return;
    }
    await Promise.all(
      [...groupBy(jobs, (job) => keySlot(job.queueName)).values()].map((slot) =>
        flows.addBulk(slot),
      ),
    );
  }

  async close(): Promise<void> {
    await this.flows?.close();
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }

  private queue(clusterId: string): Queue<ReconcileOrder> {
    let queue = this.queues.get(clusterId);
    if (queue) {
      this.queues.delete(clusterId); // re-insert: Map order is our LRU order
    } else {
      queue = new Queue<ReconcileOrder>(sidecarQueueName(clusterId), {
        connection: this.connection,
        prefix: this.prefix,
      });
      if (this.queues.size >= this.maxOpen) {
        const [oldestId, oldest] = this.queues.entries().next().value as [string, Queue];
        this.queues.delete(oldestId);
        void oldest.close();
      }
    }
    this.queues.set(clusterId, queue);
    return queue;
  }
}

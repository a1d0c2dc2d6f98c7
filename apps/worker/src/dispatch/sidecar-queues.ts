import { sidecarQueueName, type ReconcileOrder } from '@fleet/contracts';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

const orderJobId = (generation: number) => `generation-${generation}`;
const generationOf = (jobId: string | undefined) => Number.parseInt(jobId?.slice('generation-'.length) ?? '', 10);

/**
 * The per-cluster order queues. Queue objects are cheap but not free, so the most recently used
 * ones are kept; all share one Redis connection.
 */
export class SidecarQueues {
  private readonly queues = new Map<string, Queue<ReconcileOrder>>();

  constructor(
    private readonly connection: Redis,
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
    await queue.add('order', order, {
      // A forced re-send must not collide with the (completed) job of the same generation.
      jobId: force ? `${orderJobId(order.generation)}-forced-${Date.now()}` : orderJobId(order.generation),
      removeOnComplete: { count: 10 },
      removeOnFail: { count: 100 },
    });
    const waiting = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
    await Promise.all(
      waiting
        .filter((job) => generationOf(job.id) < order.generation)
        .map((job) => job.remove().catch(() => undefined)), // taken by the sidecar meanwhile
    );
  }

  async close(): Promise<void> {
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

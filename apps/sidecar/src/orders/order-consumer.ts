import { ReconcileOrder, sidecarQueueName } from '@fleet/contracts';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ReconcileResult } from '../reconcile/reconciler.js';

export interface OrderConsumerDeps {
  clusterId: string;
  connection: Redis;
  prefix: string;
  apply: (order: ReconcileOrder) => Promise<ReconcileResult>;
  /** Reports the state after the order (the report builds itself from the runtime). */
  report: () => Promise<void>;
  log: Logger;
}

/**
 * Takes orders from this cluster's own queue, one at a time. An order older than what was
 * already applied is acknowledged and ignored; the newest state always wins. An order that has
 * to wait on the cluster (disabling while NodeClaims drain) returns at once: the runtime keeps
 * re-checking it, so the queue is never held.
 */
export class OrderConsumer {
  private worker?: Worker<ReconcileOrder>;
  private appliedGeneration = 0;

  constructor(private readonly deps: OrderConsumerDeps) {}

  async start(): Promise<void> {
    this.worker = new Worker<ReconcileOrder>(
      sidecarQueueName(this.deps.clusterId),
      (job) => this.handle(job),
      { connection: this.deps.connection, prefix: this.deps.prefix, concurrency: 1 },
    );
    this.worker.on('error', (err) =>
      this.deps.log.error({ err: err.message }, 'order queue error'),
    );
    await this.worker.waitUntilReady();
  }

  async close(): Promise<void> {
    await this.worker?.close();
  }

  private async handle(job: Job<ReconcileOrder>): Promise<string> {
    const order = ReconcileOrder.parse(job.data);
    if (order.clusterId !== this.deps.clusterId) {
      throw new Error(
        `order for cluster ${order.clusterId} on the queue of ${this.deps.clusterId}`,
      );
    }
    if (order.generation < this.appliedGeneration) {
      this.deps.log.info(
        { generation: order.generation, applied: this.appliedGeneration },
        'ignoring an older order',
      );
      return 'stale';
    }
    const started = Date.now();
    const result = await this.deps.apply(order);
    this.appliedGeneration = order.generation;
    this.deps.log.info(
      {
        generation: order.generation,
        applied: result.applied,
        pruned: result.pruned,
        requeue: result.requeue,
        ms: Date.now() - started,
      },
      'order reconciled',
    );
    await this.deps.report();
    return 'applied';
  }
}

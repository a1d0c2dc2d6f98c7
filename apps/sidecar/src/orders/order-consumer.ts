import {
  PLAN_JOB_NAME,
  PlanOrder,
  ReconcileOrder,
  sidecarQueueName,
  type PlanReport,
  type RedisClient,
} from '@fleet/contracts';
import { Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { ReconcileResult } from '../reconcile/reconciler.js';
import type { PlanResult } from '../plan/plan-phase.js';

export interface OrderConsumerDeps {
  clusterId: string;
  connection: RedisClient;
  prefix: string;
  apply: (order: ReconcileOrder) => Promise<ReconcileResult>;
  /** Reports the state after the order (the report builds itself from the runtime). */
  report: () => Promise<void>;
  /** Plans a proposed order (dry runs only); absent, a plan order fails as not supported. */
  plan?: (order: ReconcileOrder) => Promise<PlanResult>;
  /** Sends a plan's result to the fleet with the cluster's own token. */
  reportPlan?: (report: PlanReport) => Promise<void>;
  log: Logger;
}

/**
 * Takes orders from this cluster's own queue, one at a time. An order older than what was
 * already applied is acknowledged and ignored; the newest state always wins. An order that has
 * to wait on the cluster (disabling while NodeClaims drain) returns at once: the runtime keeps
 * re-checking it, so the queue is never held.
 */
export class OrderConsumer {
  private worker?: Worker<ReconcileOrder | PlanOrder>;
  private appliedGeneration = 0;

  constructor(private readonly deps: OrderConsumerDeps) {}

  async start(): Promise<void> {
    this.worker = new Worker<ReconcileOrder | PlanOrder>(
      sidecarQueueName(this.deps.clusterId),
      (job) =>
        job.name === PLAN_JOB_NAME
          ? this.handlePlan(job as Job<PlanOrder>)
          : this.handle(job as Job<ReconcileOrder>),
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

  /**
   * A plan order (its own job name and ID, so it never replaces an order): the proposed state is
   * planned with dry runs and the result reported; the applied generation does not move.
   */
  private async handlePlan(job: Job<PlanOrder>): Promise<string> {
    const { planId, order } = PlanOrder.parse(job.data);
    if (order.clusterId !== this.deps.clusterId) {
      throw new Error(`plan for cluster ${order.clusterId} on the queue of ${this.deps.clusterId}`);
    }
    const started = Date.now();
    const { plan, reportPlan } = this.deps;
    if (!plan || !reportPlan) throw new Error('this sidecar does not plan changes');
    let result: PlanResult;
    try {
      result = await plan(order);
    } catch (err) {
      result = {
        outcome: 'FAILED',
        reason: 'PlanFailed',
        message: (err instanceof Error ? err.message : String(err)).slice(0, 4096),
        objects: [],
      };
    }
    await reportPlan({
      ...result,
      clusterId: this.deps.clusterId,
      planId,
      generation: order.generation,
      reportedAt: new Date().toISOString(),
    });
    this.deps.log.info(
      { planId, outcome: result.outcome, objects: result.objects.length, ms: Date.now() - started },
      'plan reported',
    );
    return 'planned';
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

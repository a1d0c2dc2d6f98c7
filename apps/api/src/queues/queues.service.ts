import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import {
  PLAN_QUEUE,
  RECONCILE_QUEUE,
  STATUS_INGEST_QUEUE,
  type PlanRequest,
  type ReconcileRequest,
  type IngestedStatusReport,
  createRedisClient,
  type RedisClient,
  queueLabel,
} from '@fleet/contracts';
import { reconcileJobOptions } from '@fleet/desired-state';
import { Queue } from 'bullmq';
import { API_CONFIG, type ApiConfig } from '../config.js';

/** The API only produces jobs; the worker fleet consumes them. */
@Injectable()
export class QueuesService implements OnModuleDestroy {
  readonly connection: RedisClient;
  private readonly reconcile: Queue<ReconcileRequest>;
  private readonly statusIngest: Queue<IngestedStatusReport>;
  private readonly plans: Queue<PlanRequest>;

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    // Auto-pipelining sends the commands of concurrent requests in one write: reports arrive in
    // bursts, and a syscall per report is what limits the report endpoint.
    this.connection = createRedisClient(config.REDIS_URL, {
      maxRetriesPerRequest: null,
      enableAutoPipelining: true,
    });
    const opts = { connection: this.connection, prefix: config.QUEUE_PREFIX };
    this.reconcile = new Queue(RECONCILE_QUEUE, opts);
    this.statusIngest = new Queue(STATUS_INGEST_QUEUE, opts);
    this.plans = new Queue(PLAN_QUEUE, opts);
  }

  /** The worker sends the plan's orders to its clusters' sidecars; one job per plan. */
  async requestPlan(request: PlanRequest): Promise<void> {
    await this.plans.add('plan', request, {
      jobId: `plan-${request.planId}`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 500, jitter: 0.5 },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 1000 },
    });
  }

  /** One job per (cluster, generation): a retried mutation cannot enqueue twice. */
  async requestReconcile(request: ReconcileRequest): Promise<void> {
    await this.reconcile.add('reconcile', request, reconcileJobOptions(request));
  }

  async ingestStatus(report: IngestedStatusReport): Promise<void> {
    await this.statusIngest.add('report', report, {
      attempts: 20,
      backoff: { type: 'exponential', delay: 250, jitter: 0.5 },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 10000 },
    });
  }

  /** Waiting plus delayed jobs of the fleet-wide queues, for the queue-depth gauge. */
  async depths(): Promise<Record<string, number>> {
    // A scrape must not hang while Redis is away (commands would wait for it): no samples then.
    if (this.connection.status !== 'ready') return {};
    const [reconcile, ingest] = await Promise.all([
      this.reconcile.getJobCounts('waiting', 'delayed', 'prioritized'),
      this.statusIngest.getJobCounts('waiting', 'delayed', 'prioritized'),
    ]);
    const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
    return {
      [queueLabel(this.reconcile.name)]: sum(reconcile),
      [queueLabel(this.statusIngest.name)]: sum(ingest),
    };
  }

  async ping(): Promise<void> {
    if (this.connection.status !== 'ready') throw new Error(`redis ${this.connection.status}`);
    await this.connection.ping();
  }

  async onModuleDestroy(): Promise<void> {
    await this.reconcile.close();
    await this.statusIngest.close();
    await this.plans.close();
    this.connection.disconnect();
  }
}

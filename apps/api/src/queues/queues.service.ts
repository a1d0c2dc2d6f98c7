import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import {
  PLAN_QUEUE,
  RECONCILE_QUEUE,
  STATUS_INGEST_QUEUE,
  INGEST_BODY_FIELD,
  INGEST_RECEIVED_AT_FIELD,
  ingestKey,
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
import { TurnBatcher } from '../common/turn-batcher.js';

/** XADD of each report (body, reception time in ARGV pairs) onto the report stream, KEYS[1]. */
const APPEND_REPORTS_LUA = `
for i = 1, #ARGV, 2 do
  redis.call('XADD', KEYS[1], '*', '${INGEST_BODY_FIELD}', ARGV[i], '${INGEST_RECEIVED_AT_FIELD}', ARGV[i + 1])
end
return #ARGV / 2`;

/** At most this many reports in one script: a bounded time for Redis in one command. */
const REPORTS_PER_SCRIPT = 256;

interface StreamCommands {
  fleetAppendReports(stream: string, ...bodiesAndTimes: (Buffer | string)[]): Promise<number>;
}

/** The API only produces jobs; the worker fleet consumes them. */
@Injectable()
export class QueuesService implements OnModuleDestroy {
  readonly connection: RedisClient;
  private readonly reconcile: Queue<ReconcileRequest>;
  private readonly statusIngest: Queue<IngestedStatusReport>;
  private readonly plans: Queue<PlanRequest>;
  private readonly reportStream: string;
  private readonly commands: StreamCommands;
  private readonly digests: string;
  private readonly digestFences: string;

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
    this.reportStream = ingestKey(config.QUEUE_PREFIX, 'reports');
    this.connection.defineCommand('fleetAppendReports', {
      numberOfKeys: 1,
      lua: APPEND_REPORTS_LUA,
    });
    this.commands = this.connection as unknown as StreamCommands;
    this.digests = ingestKey(config.QUEUE_PREFIX, 'digests');
    this.digestFences = ingestKey(config.QUEUE_PREFIX, 'digest-fences');
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

  /**
   * A deregistered cluster's entries in the ingest hashes (its digest and its digest fence), else
   * kept forever. Safe while a report of it is in flight: cluster ids are never reused and no
   * report of a deleted cluster commits, so no digest recorded after this can ever answer a
   * heartbeat; a batch that committed just before the deregistration can at worst record one
   * orphan digest again (recording never re-creates a fence).
   */
  async forgetClusterIngestState(clusterId: string): Promise<void> {
    await this.connection
      .multi()
      .hdel(this.digests, clusterId)
      .hdel(this.digestFences, clusterId)
      .exec();
  }

  /**
   * Appends a validated report onto the report stream, its body as the sidecar sent it and when
   * the API received it; the workers drain it in batches (issue 19). The reports of one turn of
   * the event loop go as one script of XADDs (issue 48, target 1: a command, a reply and their
   * promises a report were the API's largest cost after parsing). Resolves once Redis holds the
   * entry: a 202 is answered only then, and the entry stays until a worker committed it and
   * acknowledged it. (The BullMQ status-ingest queue is still drained by the workers, for jobs
   * queued before.)
   */
  appendReport(body: Buffer, receivedAt: string): Promise<void> {
    return this.reports.add([body, receivedAt]);
  }

  private readonly reports = new TurnBatcher<[body: Buffer, receivedAt: string], void>(
    REPORTS_PER_SCRIPT,
    async (batch) => {
      await this.commands.fleetAppendReports(this.reportStream, ...batch.flat());
      return batch.map(() => undefined);
    },
  );

  /** Waiting plus delayed jobs of the fleet-wide queues, for the queue-depth gauge. */
  async depths(): Promise<Record<string, number>> {
    // A scrape must not hang while Redis is away (commands would wait for it): no samples then.
    if (this.connection.status !== 'ready') return {};
    const [reconcile, ingest, stream] = await Promise.all([
      this.reconcile.getJobCounts('waiting', 'delayed', 'prioritized'),
      this.statusIngest.getJobCounts('waiting', 'delayed', 'prioritized'),
      // Entries stay in the report stream until committed and acknowledged: its length is the
      // ingest backlog.
      this.connection.xlen(this.reportStream),
    ]);
    const sum = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
    return {
      [queueLabel(this.reconcile.name)]: sum(reconcile),
      [queueLabel(this.statusIngest.name)]: sum(ingest) + stream,
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

import {
  PLAN_JOB_NAME,
  type ClusterMetrics,
  PlanOrder,
  sidecarQueueName,
  type PlanReport,
  type ReconcileOrder,
  type StatusReport,
} from '@fleet/contracts';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * Plays one cluster's sidecar: takes orders from its queue, reports the order's generation, and
 * heartbeats. It turns Degraded once it observes `failFrom` or a later generation. A plan order
 * is answered with a canned PLANNED result (one CHANGED Deployment, its log level) through the
 * real plan report endpoint, so the API and worker stay real; `plansAnswered` counts them.
 */
export class FakeSidecar {
  observed = 0;
  failFrom: number | undefined;
  plansAnswered = 0;
  /** False: reports Available=False, Progressing=True (still converging: health `waiting`). */
  available = true;
  /** What every report says of the cluster's capacity (e.g. NodeClaim launch failures). */
  metrics: ClusterMetrics = {};
  /** Every reconcile order taken, in order (what the fleet told this cluster). */
  readonly orders: ReconcileOrder[] = [];
  private readonly redis = new Redis({ maxRetriesPerRequest: null });
  private readonly worker: Worker<ReconcileOrder | PlanOrder>;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly uid: string,
    private readonly token: string,
    private readonly apiUrl: string,
    prefix: string,
  ) {
    this.worker = new Worker<ReconcileOrder | PlanOrder>(
      sidecarQueueName(uid),
      async (job) => {
        if (job.name === PLAN_JOB_NAME) {
          await this.answerPlan(PlanOrder.parse(job.data));
          return;
        }
        this.orders.push(job.data as ReconcileOrder);
        this.observed = Math.max(this.observed, (job.data as ReconcileOrder).generation);
        await this.report();
      },
      { connection: this.redis, prefix },
    );
    this.timer = setInterval(() => void this.report().catch(() => undefined), 300);
  }

  async report(): Promise<void> {
    if (this.observed === 0) return;
    const degraded = this.failFrom !== undefined && this.observed >= this.failFrom;
    const at = new Date().toISOString();
    const condition = (type: string, status: 'True' | 'False', reason: string) => ({
      type,
      status,
      reason,
      message: '',
      lastTransitionTime: at,
    });
    const body: StatusReport = {
      clusterId: this.uid,
      observedGeneration: this.observed,
      conditions: degraded
        ? [
            condition('Available', 'False', 'NodePoolRejected'),
            condition('Degraded', 'True', 'NodePoolRejected'),
            condition('Progressing', 'False', 'AsExpected'),
          ]
        : this.available
          ? [
              condition('Available', 'True', 'AsExpected'),
              condition('Degraded', 'False', 'AsExpected'),
              condition('Progressing', 'False', 'AsExpected'),
            ]
          : [
              condition('Available', 'False', 'Reconciling'),
              condition('Degraded', 'False', 'AsExpected'),
              condition('Progressing', 'True', 'Reconciling'),
            ],
      metrics: this.metrics,
      csrDecisions: [],
      reportedAt: at,
    };
    const res = await fetch(`${this.apiUrl}/v1/clusters/${this.uid}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
      body: JSON.stringify(body),
    });
    if (res.status !== 202) throw new Error(`report refused: ${res.status} ${await res.text()}`);
  }

  private async answerPlan({ planId, order }: PlanOrder): Promise<void> {
    const body: PlanReport = {
      clusterId: this.uid,
      planId,
      generation: order.generation,
      outcome: 'PLANNED',
      objects: [
        {
          target: 'workload',
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'kube-system',
          name: 'karpenter',
          action: 'CHANGED',
          diff: [
            {
              path: '.spec.template.spec.containers[0].env[0].value',
              before: 'info',
              after: 'debug',
            },
          ],
          errors: [],
        },
      ],
      reportedAt: new Date().toISOString(),
    };
    const res = await fetch(`${this.apiUrl}/v1/clusters/${this.uid}/plans/${planId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
      body: JSON.stringify(body),
    });
    if (res.status !== 202)
      throw new Error(`plan report refused: ${res.status} ${await res.text()}`);
    this.plansAnswered++;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.worker.close();
    this.redis.disconnect();
  }
}

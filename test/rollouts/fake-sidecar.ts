import { sidecarQueueName, type ReconcileOrder, type StatusReport } from '@fleet/contracts';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * Plays one cluster's sidecar: takes orders from its queue, reports the order's generation, and
 * heartbeats. It turns Degraded once it observes `failFrom` or a later generation.
 */
export class FakeSidecar {
  observed = 0;
  failFrom: number | undefined;
  private readonly redis = new Redis({ maxRetriesPerRequest: null });
  private readonly worker: Worker<ReconcileOrder>;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly uid: string,
    private readonly token: string,
    private readonly apiUrl: string,
    prefix: string,
  ) {
    this.worker = new Worker<ReconcileOrder>(
      sidecarQueueName(uid),
      async (job) => {
        this.observed = Math.max(this.observed, job.data.generation);
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
        : [
            condition('Available', 'True', 'AsExpected'),
            condition('Degraded', 'False', 'AsExpected'),
            condition('Progressing', 'False', 'AsExpected'),
          ],
      metrics: {},
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

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.worker.close();
    this.redis.disconnect();
  }
}

import type { StatusReport } from '@fleet/contracts';
import type { Logger } from 'pino';
import type { SidecarRuntime } from '../runtime.js';

/**
 * Sends what the runtime observes to the fleet: after each order, on each heartbeat, and soon
 * after a watch-driven change (ClusterOperator, CSR decisions, disable steps). Sends never
 * overlap, so a report is never overtaken by an older one; decisions leave the outbox only once
 * a report carrying them was accepted.
 */
export class ReportPublisher {
  private chain: Promise<void> = Promise.resolve();
  private debounce?: NodeJS.Timeout;

  constructor(
    private readonly runtime: SidecarRuntime,
    private readonly clusterId: string,
    private readonly send: (report: StatusReport) => Promise<void>,
    private readonly log: Logger,
    private readonly debounceMs = 200,
  ) {
    runtime.onChange((urgent) => (urgent ? void this.publish() : this.soon()));
  }

  soon(): void {
    if (this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      void this.publish();
    }, this.debounceMs);
  }

  stop(): void {
    clearTimeout(this.debounce);
  }

  publish(): Promise<void> {
    const next = this.chain.then(async () => {
      const snapshot = await this.runtime.snapshot();
      if (!snapshot) return;
      const report: StatusReport = {
        clusterId: this.clusterId,
        ...snapshot,
        reportedAt: new Date().toISOString(),
      };
      await this.send(report);
      this.runtime.approver.acknowledge(report.csrDecisions);
    });
    this.chain = next.catch((err: unknown) => {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'report failed');
    });
    return this.chain;
  }
}

import type { CsrDecision, StatusReport } from '@fleet/contracts';
import type { Logger } from 'pino';
import type { StatusSnapshot } from '../runtime.js';

/** What is reported: the sidecar host, or a runtime in tests. */
export interface ReportSource {
  onChange(listener: (urgent: boolean) => void): () => void;
  snapshot(): Promise<StatusSnapshot | undefined>;
  acknowledge(decisions: readonly CsrDecision[]): void;
}

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
    private readonly runtime: ReportSource,
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
      this.runtime.acknowledge(report.csrDecisions);
    });
    this.chain = next.catch((err: unknown) => {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'report failed');
    });
    return this.chain;
  }
}

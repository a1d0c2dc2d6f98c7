import { REPORT_DECISIONS_PER_SEND, type CsrDecision, type StatusReport } from '@fleet/contracts';
import type { Logger } from 'pino';
import type { StatusSnapshot } from './cluster-status.js';
import { PermanentReportError } from './status-reporter.js';

/** What is reported: the sidecar host, or a runtime in tests. */
export interface ReportSource {
  onChange(listener: (urgent: boolean) => void): () => void;
  snapshot(): Promise<StatusSnapshot | undefined>;
  acknowledge(decisions: readonly CsrDecision[]): void;
  /** The fleet refuses these decisions on their own: give up on them (and count it). */
  drop(decisions: readonly CsrDecision[]): void;
}

/** Reports sent back to back by one publish while the outbox holds more than one report carries. */
const REPORTS_PER_PUBLISH = 32;

/** A refusal that says "this report is too big or malformed", not "stop reporting". */
const isShrinkable = (err: unknown): err is PermanentReportError =>
  err instanceof PermanentReportError && (err.status === 413 || err.status === 400);

/**
 * Sends what the runtime observes to the fleet: after each order, on each heartbeat, and soon
 * after a watch-driven change (ClusterOperator, CSR decisions, disable steps). Sends never
 * overlap, so a report is never overtaken by an older one; decisions leave the outbox only once
 * a report carrying them was accepted.
 *
 * A report carries at most `decisionsPerSend` decisions, oldest first; the rest follow in the
 * next reports, sent at once. A report refused as too large (413) or invalid (400) is never the
 * end of reporting: it is sent again with half the decisions, down to one; a single decision
 * still refused while the report without it is accepted is dropped and counted
 * (`csrDecisionsDropped`). Only a report refused with no decisions at all is left to the next
 * heartbeat (then the fault is not in the decisions, and the logs say so).
 */
export class ReportPublisher {
  private chain: Promise<void> = Promise.resolve();
  private debounce?: NodeJS.Timeout;
  /** Decisions the next report carries; halved on 413/400, grown back on success. */
  private batch: number;

  constructor(
    private readonly runtime: ReportSource,
    private readonly clusterId: string,
    private readonly send: (report: StatusReport) => Promise<void>,
    private readonly log: Logger,
    private readonly debounceMs = 200,
    private readonly decisionsPerSend = REPORT_DECISIONS_PER_SEND,
  ) {
    this.batch = decisionsPerSend;
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
    const next = this.chain.then(() => this.drain());
    this.chain = next.catch((err: unknown) => {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'report failed');
    });
    return this.chain;
  }

  private async drain(): Promise<void> {
    // One observation per publish (metrics list Nodes and Pods); its decisions go out in as
    // many reports as they need. Decisions made meanwhile go with the next publish.
    const snapshot = await this.runtime.snapshot();
    if (!snapshot) return;
    let waiting = snapshot.csrDecisions;
    for (let sent = 0; sent < REPORTS_PER_PUBLISH; sent++) {
      const carried = waiting.slice(0, this.batch);
      try {
        await this.send(this.report(snapshot, carried));
      } catch (err) {
        if (!isShrinkable(err) || carried.length === 0) throw err;
        if (carried.length > 1) {
          this.batch = Math.max(1, Math.floor(carried.length / 2));
          this.log.warn(
            { status: err.status, decisions: carried.length, next: this.batch },
            'report refused; sending fewer decisions',
          );
          continue;
        }
        // One decision left: is it the decision, or the rest of the report?
        await this.send(this.report(snapshot, []));
        this.runtime.drop(carried);
        waiting = waiting.slice(1);
        this.log.error(
          { status: err.status, decision: carried[0], refusal: err.message },
          'the fleet refuses this CSR decision on its own; dropped',
        );
        if (waiting.length === 0) return;
        continue;
      }
      this.runtime.acknowledge(carried);
      waiting = waiting.slice(carried.length);
      this.batch = Math.min(this.decisionsPerSend, this.batch * 2);
      if (waiting.length === 0) return;
    }
    // Still more to send: carry on after whatever else is waiting to report.
    this.soon();
  }

  private report(snapshot: StatusSnapshot, csrDecisions: CsrDecision[]): StatusReport {
    return {
      clusterId: this.clusterId,
      ...snapshot,
      csrDecisions,
      reportedAt: new Date().toISOString(),
    };
  }
}

import type { PlanReport, StatusReport } from '@fleet/contracts';
import { createHash } from 'node:crypto';

/** A full report goes at least this often even when nothing changed (the health history's step). */
export const FULL_REPORT_EVERY_MS = 5 * 60_000;

/**
 * The digest of a report as this sidecar sends it, without the fields that change on every send
 * (`reportedAt`, and `digest` itself): equal digests mean the fleet would store the same status.
 */
export function reportDigest(report: StatusReport): string {
  const { reportedAt: _at, digest: _digest, ...status } = report;
  return createHash('sha256').update(JSON.stringify(status)).digest('hex');
}

/**
 * Sends reports to the fleet API with the cluster's own token; retried with backoff on failure.
 *
 * A report equal to the last one the fleet accepted (same digest, no CSR decisions) goes as a
 * heartbeat naming that digest (issue 19): the fleet only refreshes the cluster's liveness. When
 * the fleet does not hold that digest as applied (409: not yet ingested, forgotten after a
 * Stale sweep or a flushed Redis, another replica's report) the full report follows at once;
 * and one goes every FULL_REPORT_EVERY_MS anyway.
 */
export class StatusReporter {
  private accepted: { digest: string; at: number } | undefined;

  constructor(
    private readonly apiUrl: string,
    private readonly clusterId: string,
    private readonly token: string,
    private readonly fullReportEveryMs = FULL_REPORT_EVERY_MS,
  ) {}

  /** Heartbeats sent instead of a full report (for the sidecar's own metrics and tests). */
  heartbeats = 0;

  async send(report: StatusReport, attempts = 5): Promise<void> {
    const digest = reportDigest(report);
    const last = this.accepted;
    if (
      last?.digest === digest &&
      report.csrDecisions.length === 0 &&
      Date.now() - last.at < this.fullReportEveryMs &&
      (await this.heartbeat(digest, attempts))
    ) {
      this.heartbeats++;
      return;
    }
    await this.post(`/v1/clusters/${this.clusterId}/status`, { ...report, digest }, attempts);
    this.accepted = { digest, at: Date.now() };
  }

  /** True when the fleet took it; false when it wants the full report (409). */
  private async heartbeat(digest: string, attempts: number): Promise<boolean> {
    try {
      await this.post(
        `/v1/clusters/${this.clusterId}/heartbeat`,
        { clusterId: this.clusterId, digest },
        attempts,
      );
      return true;
    } catch (err) {
      // 409: not the applied report; 404: a fleet older than heartbeats. Either way, report.
      if (err instanceof PermanentReportError && (err.status === 409 || err.status === 404)) {
        this.accepted = undefined;
        return false;
      }
      throw err;
    }
  }

  /** A plan's result, beside the status reports, with the same token. */
  async sendPlan(report: PlanReport, attempts = 5): Promise<void> {
    await this.post(`/v1/clusters/${this.clusterId}/plans/${report.planId}`, report, attempts);
  }

  private async post(path: string, report: unknown, attempts: number): Promise<void> {
    const url = new URL(path, this.apiUrl);
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
          body: JSON.stringify(report),
          signal: AbortSignal.timeout(10_000),
        });
        if (res.ok) return;
        const body = await res.text();
        // 4xx other than 429 will not get better by retrying.
        if (res.status < 500 && res.status !== 429) {
          throw new PermanentReportError(
            res.status,
            `fleet API refused the report: HTTP ${res.status} ${body.slice(0, 512)}`,
          );
        }
        lastError = new Error(`fleet API answered HTTP ${res.status} ${body}`);
      } catch (err) {
        if (err instanceof PermanentReportError) throw err;
        lastError = err;
      }
      await new Promise((r) =>
        setTimeout(r, Math.min(200 * 2 ** attempt, 5000) * (0.5 + Math.random())),
      );
    }
    throw lastError instanceof Error ? lastError : new Error(String(lastError));
  }
}

/** The fleet API refused this report (a 4xx other than 429): sending it again will not help. */
export class PermanentReportError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

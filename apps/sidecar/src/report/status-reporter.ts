import type { PlanReport, StatusReport } from '@fleet/contracts';

/** Sends reports to the fleet API with the cluster's own token; retried with backoff on failure. */
export class StatusReporter {
  constructor(
    private readonly apiUrl: string,
    private readonly clusterId: string,
    private readonly token: string,
  ) {}

  async send(report: StatusReport, attempts = 5): Promise<void> {
    await this.post(`/v1/clusters/${this.clusterId}/status`, report, attempts);
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

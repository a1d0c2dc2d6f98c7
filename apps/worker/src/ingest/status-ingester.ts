import type { IngestedStatusReport as StatusReport } from '@fleet/contracts';
import type pg from 'pg';
import type { Logger } from 'pino';
import { writeReportBatch, type IngestResult } from './report-batch-writer.js';

export type { IngestResult } from './report-batch-writer.js';

interface Pending {
  report: StatusReport;
  resolve: (result: IngestResult) => void;
  reject: (err: unknown) => void;
}

export interface StatusIngesterOptions {
  /** A batch is written when it holds this many reports... */
  maxBatch: number;
  /** ...or when its oldest report has waited this long. */
  flushMs: number;
  /** Batches written at the same time (each is one transaction on its own connection). */
  parallelFlushes: number;
}

/**
 * Records sidecar reports many per transaction. `ingest` resolves only after the report's batch
 * committed, so a BullMQ job completes only once its rows are in PostgreSQL: with the worker at a
 * high concurrency, the jobs in flight fill the batches (exactly-once by idempotent writes).
 */
export class StatusIngester {
  private buffer: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing = 0;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly log: Logger,
    private readonly options: StatusIngesterOptions = {
      maxBatch: 500,
      flushMs: 50,
      parallelFlushes: 2,
    },
  ) {}

  ingest(report: StatusReport): Promise<IngestResult> {
    return new Promise<IngestResult>((resolve, reject) => {
      this.buffer.push({ report, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when every report handed in so far is written (or failed). */
  async drain(): Promise<void> {
    while (this.buffer.length || this.flushing) {
      if (this.buffer.length && this.flushing < this.options.parallelFlushes) this.flush();
      await new Promise<void>((resolve) => this.idle.add(resolve));
    }
  }

  private schedule(): void {
    if (
      this.buffer.length >= this.options.maxBatch &&
      this.flushing < this.options.parallelFlushes
    ) {
      this.flush();
    } else if (this.buffer.length && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (this.flushing < this.options.parallelFlushes) this.flush();
        else this.schedule();
      }, this.options.flushMs);
    }
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer.splice(0, this.options.maxBatch);
    if (!batch.length) return;
    this.flushing++;
    void this.write(batch).finally(() => {
      this.flushing--;
      for (const wake of this.idle) wake();
      this.idle.clear();
      this.schedule();
    });
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      const results = await writeReportBatch(
        this.pool,
        batch.map((p) => p.report),
      );
      batch.forEach((p, i) => p.resolve(results[i] ?? { advanced: false, changed: false }));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return;
      }
      // One bad report must not hold back the others: write them one by one, so only the bad
      // one fails (and is retried, then dead-lettered). A lost connection fails each of them too,
      // and BullMQ retries them with backoff.
      this.log.warn(
        { err: String(err), reports: batch.length },
        'batch failed; writing its reports one by one',
      );
      await Promise.all(
        batch.map(async (p) => {
          try {
            const [result] = await writeReportBatch(this.pool, [p.report]);
            p.resolve(result ?? { advanced: false, changed: false });
          } catch (single) {
            p.reject(single);
          }
        }),
      );
    }
  }
}

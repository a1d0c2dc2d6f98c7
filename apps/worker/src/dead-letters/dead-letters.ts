import { DEAD_LETTER_QUEUE, type DeadLetter, type RedisClient, queueLabel } from '@fleet/contracts';
import { Queue, type Job, type Worker } from 'bullmq';
import type { Logger } from 'pino';

/**
 * Moves a job that exhausted its attempts to the dead-letter queue, where nothing consumes it:
 * the API lists and redrives it. The dead letter's ID is derived from the job's, so a repeated
 * `failed` event records it once.
 */
export class DeadLetters {
  private readonly queue: Queue<DeadLetter>;

  constructor(
    connection: RedisClient,
    prefix: string,
    private readonly log: Logger,
  ) {
    this.queue = new Queue<DeadLetter>(DEAD_LETTER_QUEUE, { connection, prefix });
  }

  /** Calls `onDead` (e.g. to mark the reconcile run FAILED) once the job is dead-lettered. */
  watch(worker: Worker, onDead?: (job: Job, reason: string) => Promise<void>): void {
    worker.on('failed', (job, err) => {
      if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
      const letter: DeadLetter = {
        queue: queueLabel(worker.name),
        jobId: job.id ?? '',
        name: job.name,
        data: job.data as unknown,
        attempts: job.opts.attempts ?? 1,
        attemptsMade: job.attemptsMade,
        failedReason: err.message,
        failedAt: new Date().toISOString(),
      };
      void this.queue
        .add('dead-letter', letter, { jobId: `${queueLabel(worker.name)}.${job.id ?? Date.now()}` })
        .then(() => onDead?.(job, err.message))
        .then(() =>
          this.log.error(
            { queue: worker.name, job: job.id, err: err.message },
            'job dead-lettered',
          ),
        )
        .catch((e: unknown) =>
          this.log.error(
            { queue: worker.name, job: job.id, err: String(e) },
            'dead-lettering failed',
          ),
        );
    });
  }

  /** A letter of a consumer that is not a BullMQ worker (the report stream); once per jobId. */
  async record(letter: DeadLetter): Promise<void> {
    await this.queue.add('dead-letter', letter, { jobId: `${letter.queue}.${letter.jobId}` });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

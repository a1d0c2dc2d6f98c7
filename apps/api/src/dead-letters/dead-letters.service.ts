import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { DEAD_LETTER_QUEUE, DeadLetter as DeadLetterData } from '@fleet/contracts';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { decodeCursor, encodeCursor, pageWindow } from '../common/connection.js';
import { notFoundError, userInputError } from '../common/errors.js';
import type { DeadLetter, DeadLetterConnection } from './dead-letter.model.js';

/** Reads and redrives the worker's dead-letter queue (nothing consumes it: its jobs wait there). */
@Injectable()
export class DeadLettersService implements OnModuleDestroy {
  private readonly connection: Redis;
  private readonly deadLetters: Queue<DeadLetterData>;
  private readonly targets = new Map<string, Queue>();

  constructor(@Inject(API_CONFIG) private readonly config: ApiConfig) {
    this.connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
    this.deadLetters = new Queue(DEAD_LETTER_QUEUE, {
      connection: this.connection,
      prefix: config.QUEUE_PREFIX,
    });
  }

  async list(first: number | null, after: string | null): Promise<DeadLetterConnection> {
    const { size } = pageWindow({ first });
    let offset = 0;
    if (after) {
      const parts = decodeCursor(after, 'after');
      if (parts[0] !== 'dead-letter' || typeof parts[1] !== 'number')
        throw userInputError('after', 'is not a dead-letter cursor');
      offset = parts[1] + 1;
    }
    const [jobs, total] = await Promise.all([
      this.deadLetters.getJobs(['waiting'], offset, offset + size, true),
      this.deadLetters.getWaitingCount(),
    ]);
    const page = jobs.slice(0, size);
    const edges = page.map((job, i) => ({
      cursor: encodeCursor(['dead-letter', offset + i]),
      node: toModel(job),
    }));
    return {
      edges,
      nodes: edges.map((e) => e.node),
      pageInfo: {
        hasNextPage: jobs.length > size || offset + size < total,
        hasPreviousPage: offset > 0,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
      totalCount: total,
    };
  }

  /** Puts the job back on its queue under a new ID (the failed one still holds the old) and forgets the letter. */
  async redrive(id: string): Promise<DeadLetter> {
    const job = await this.deadLetters.getJob(id);
    if (!job) throw notFoundError('DeadLetter', id);
    const letter = DeadLetterData.parse(job.data);
    await this.target(letter.queue).add(letter.name, letter.data, {
      jobId: `${letter.jobId}.redrive.${Date.now()}`,
      attempts: letter.attempts,
      backoff: { type: 'exponential', delay: 500, jitter: 0.5 },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 10000 },
    });
    await job.remove();
    return toModel(job);
  }

  async redriveAll(): Promise<number> {
    let count = 0;
    for (;;) {
      const jobs = await this.deadLetters.getJobs(['waiting'], 0, 99, true);
      if (!jobs.length) return count;
      for (const job of jobs) {
        if (job.id) {
          await this.redrive(job.id);
          count++;
        }
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([
      this.deadLetters.close(),
      ...[...this.targets.values()].map((q) => q.close()),
    ]);
    this.connection.disconnect();
  }

  private target(name: string): Queue {
    let queue = this.targets.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.config.QUEUE_PREFIX });
      this.targets.set(name, queue);
    }
    return queue;
  }
}

function toModel(job: Job<DeadLetterData>): DeadLetter {
  const letter = DeadLetterData.parse(job.data);
  return { id: job.id ?? '', ...letter, failedAt: new Date(letter.failedAt) };
}

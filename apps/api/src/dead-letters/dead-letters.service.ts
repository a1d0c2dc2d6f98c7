import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import {
  DEAD_LETTER_QUEUE,
  DeadLetter as DeadLetterData,
  createRedisClient,
  type RedisClient,
  queueLabel,
  queueName,
} from '@fleet/contracts';
import { Queue, type Job } from 'bullmq';
import { Prisma } from '@fleet/database';
import { AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { labelSelectorSql } from '../clusters/cluster-query.js';
import { API_CONFIG, type ApiConfig } from '../config.js';
import { PrismaService } from '../database/prisma.service.js';
import { decodeCursor, encodeCursor, pageWindow } from '../common/connection.js';
import { notFoundError, userInputError } from '../common/errors.js';
import { isUuid } from '../common/global-id.js';
import type { DeadLetter, DeadLetterConnection } from './dead-letter.model.js';

/** Reads and redrives the worker's dead-letter queue (nothing consumes it: its jobs wait there). */
@Injectable()
export class DeadLettersService implements OnModuleDestroy {
  private readonly connection: RedisClient;
  private readonly deadLetters: Queue<DeadLetterData>;
  private readonly targets = new Map<string, Queue>();

  constructor(
    @Inject(API_CONFIG) private readonly config: ApiConfig,
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
  ) {
    this.connection = createRedisClient(config.REDIS_URL, { maxRetriesPerRequest: null });
    this.deadLetters = new Queue(DEAD_LETTER_QUEUE, {
      connection: this.connection,
      prefix: config.QUEUE_PREFIX,
    });
  }

  /**
   * Oldest first. A scoped caller sees only letters of clusters within its scope (a letter names
   * its cluster in `data.clusterId`); letters of no cluster are for unscoped admins only.
   */
  async list(
    principal: Principal,
    first: number | null,
    after: string | null,
  ): Promise<DeadLetterConnection> {
    const { size } = pageWindow({ first });
    let offset = 0;
    if (after) {
      const parts = decodeCursor(after, 'after');
      if (parts[0] !== 'dead-letter' || typeof parts[1] !== 'number' || parts[1] < 0)
        throw userInputError('after', 'is not a dead-letter cursor');
      offset = parts[1] + 1;
    }
    let jobs: Job<DeadLetterData>[];
    let total: number;
    if (principal.scope) {
      const visible = await this.visibleTo(
        principal,
        await this.deadLetters.getJobs(['waiting'], 0, -1, true),
      );
      total = visible.length;
      jobs = visible.slice(offset, offset + size + 1);
    } else {
      [jobs, total] = await Promise.all([
        this.deadLetters.getJobs(['waiting'], offset, offset + size, true),
        this.deadLetters.getWaitingCount(),
      ]);
    }
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

  /**
   * Puts the job back on its queue under a new ID (the failed one still holds the old) and
   * forgets the letter. A letter outside the caller's scope is NOT_FOUND. Audited.
   */
  async redrive(principal: Principal, id: string): Promise<DeadLetter> {
    const job = await this.deadLetters.getJob(id);
    if (!job || !(await this.visibleTo(principal, [job])).length)
      throw notFoundError('DeadLetter', id);
    return this.redriveJob(principal, job);
  }

  /** Redrives every dead letter the caller sees; returns how many. */
  async redriveAll(principal: Principal): Promise<number> {
    let count = 0;
    let offset = 0;
    for (;;) {
      const jobs = await this.deadLetters.getJobs(['waiting'], offset, offset + 99, true);
      if (!jobs.length) return count;
      const visible = await this.visibleTo(principal, jobs);
      // Letters left in place (out of scope) shift the next page.
      offset += jobs.length - visible.length;
      for (const job of visible) {
        await this.redriveJob(principal, job);
        count++;
      }
    }
  }

  private async redriveJob(principal: Principal, job: Job<DeadLetterData>): Promise<DeadLetter> {
    const letter = DeadLetterData.parse(job.data);
    const jobId = `${letter.jobId}.redrive.${Date.now()}`;
    // Letters name the queue by its label; the queue itself is hash-tagged (docs/DESIGN.md).
    await this.target(queueName(queueLabel(letter.queue))).add(letter.name, letter.data, {
      jobId,
      attempts: letter.attempts,
      backoff: { type: 'exponential', delay: 500, jitter: 0.5 },
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 10000 },
    });
    await job.remove();
    // After the fact (Redis has no transaction with PostgreSQL): a redrive whose record failed
    // to write is reported to the caller as an error, though the job was requeued.
    await this.prisma.client.$transaction((tx) =>
      this.audit.record(
        tx,
        principal,
        'redriveDeadLetter',
        clusterIdOf(letter) ?? null,
        { deadLetterId: job.id, queue: letter.queue, jobId: letter.jobId, name: letter.name },
        { queue: letter.queue, jobId },
      ),
    );
    return toModel(job);
  }

  /** The jobs whose cluster is within the caller's scope (all of them for an unscoped caller). */
  private async visibleTo(
    principal: Principal,
    jobs: Job<DeadLetterData>[],
  ): Promise<Job<DeadLetterData>[]> {
    if (!principal.scope) return jobs;
    const ids = [...new Set(jobs.flatMap((j) => clusterIdOf(j.data) ?? []))];
    if (!ids.length) return [];
    const rows = await this.prisma.client.$queryRaw<{ id: string }[]>`
      SELECT c.id::text AS id FROM "Cluster" c
       WHERE c.id = ANY(${ids}::uuid[]) AND ${Prisma.join([Prisma.sql`TRUE`, ...labelSelectorSql(principal.scope)], ' AND ')}`;
    const inScope = new Set(rows.map((r) => r.id));
    return jobs.filter((j) => inScope.has(clusterIdOf(j.data) ?? ''));
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
  // Operators see a queue's plain name: letters the report stream recorded before it used the
  // label still name the hash-tagged queue (`{status-ingest}`).
  return {
    id: job.id ?? '',
    ...letter,
    queue: queueLabel(letter.queue),
    failedAt: new Date(letter.failedAt),
  };
}

/** The cluster a letter's job was about (reconcile requests and status reports name one). */
function clusterIdOf(letter: { data: unknown }): string | undefined {
  const id = (letter.data as { clusterId?: unknown } | null)?.clusterId;
  return isUuid(id) ? id.toLowerCase() : undefined;
}

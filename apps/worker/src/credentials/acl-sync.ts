import {
  killSidecarConnections,
  onEveryRedisNode,
  SIDECAR_CREDENTIALS_QUEUE,
  sidecarAclSetUser,
  type RedisClient,
} from '@fleet/contracts';
import type { PrismaClient } from '@fleet/database';
import { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';

export const CREDENTIALS_QUEUE = SIDECAR_CREDENTIALS_QUEUE;

/**
 * Keeps Redis's sidecar users in line with PostgreSQL: ends rotation grace periods and
 * recreates every user from its stored password hash, so a Redis restarted empty lets each
 * sidecar back in without anyone re-issuing credentials.
 */
export class SidecarAclSync {
  constructor(
    private readonly db: PrismaClient,
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async sync(now = new Date()): Promise<{ users: number; expired: number }> {
    const ended = await this.db.cluster.findMany({
      where: { previousCredentialsExpireAt: { lte: now } },
      select: { id: true },
    });
    const { count: expired } = await this.db.cluster.updateMany({
      where: { id: { in: ended.map((c) => c.id) }, previousCredentialsExpireAt: { lte: now } },
      data: {
        previousReportTokenHash: null,
        previousRedisPasswordHash: null,
        previousCredentialsExpireAt: null,
      },
    });
    let users = 0;
    let cursor: string | undefined;
    for (;;) {
      const clusters = await this.db.cluster.findMany({
        select: { id: true, redisPasswordHash: true, previousRedisPasswordHash: true },
        orderBy: { id: 'asc' },
        take: 1000,
        ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
      });
      if (clusters.length === 0) break;
      const commands = clusters.map((c) =>
        sidecarAclSetUser(
          this.prefix,
          c.id,
          [c.redisPasswordHash, c.previousRedisPasswordHash].filter((h): h is string => Boolean(h)),
        ),
      );
      // ACL users live per node: one pipeline of the page's SETUSERs to every node of a cluster.
      await onEveryRedisNode(this.redis, async (node) => {
        const pipeline = node.pipeline();
        for (const args of commands) pipeline.call('ACL', ...args);
        const replies = (await pipeline.exec()) ?? [];
        const failed = replies.find(([err]) => err);
        if (failed) throw failed[0]!;
      });
      users += clusters.length;
      cursor = clusters.at(-1)!.id;
    }
    // The users now accept only the current password: cut connections opened with the old one
    // (every connection of the user; the sidecar reconnects with its current password).
    for (const { id } of ended) await killSidecarConnections(this.redis, id);
    return { users, expired };
  }
}

export async function startAclSync(deps: {
  db: PrismaClient;
  producer: RedisClient;
  workerConnection: RedisClient;
  prefix: string;
  everyMs: number;
  log: Logger;
}): Promise<{ close(): Promise<void> }> {
  const sync = new SidecarAclSync(deps.db, deps.producer, deps.prefix);
  const queue = new Queue(CREDENTIALS_QUEUE, { connection: deps.producer, prefix: deps.prefix });
  const ensureScheduler = async () => {
    // Only when missing: re-upserting an existing scheduler would push its next run back.
    if (await queue.getJobScheduler('acl-sync')) return;
    await queue.upsertJobScheduler(
      'acl-sync',
      { every: deps.everyMs },
      { name: 'acl-sync', opts: { removeOnComplete: 10, removeOnFail: 50 } },
    );
  };
  await ensureScheduler();
  // A Redis restarted empty has lost the sidecar users and this scheduler with them, the very
  // job that would bring the users back: the worker puts the scheduler back by itself, as it
  // does the maintenance ones.
  const watchdog = setInterval(
    () =>
      void ensureScheduler().catch((err: unknown) =>
        deps.log.warn({ err: String(err) }, 'cannot restore the ACL sync scheduler'),
      ),
    Math.max(1000, Math.min(deps.everyMs, 60_000)),
  );
  watchdog.unref();
  const worker = new Worker(
    CREDENTIALS_QUEUE,
    async () => {
      const result = await sync.sync();
      deps.log.debug(result, 'sidecar ACL users synced');
      return result;
    },
    { connection: deps.workerConnection, prefix: deps.prefix, concurrency: 1 },
  );
  worker.on('error', (err) => deps.log.error({ err: err.message }, 'ACL sync worker error'));
  await worker.waitUntilReady();
  return {
    async close() {
      clearInterval(watchdog);
      await worker.close();
      await queue.close();
    },
  };
}

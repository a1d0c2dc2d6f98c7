import {
  killSidecarConnections,
  onEveryRedisNode,
  SIDECAR_CREDENTIALS_QUEUE,
  sidecarAclSetUser,
  type RedisClient,
} from '@fleet/contracts';
import type { Prisma, PrismaClient } from '@fleet/database';
import { Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';

export const CREDENTIALS_QUEUE = SIDECAR_CREDENTIALS_QUEUE;

/** How long a page of ACL SETUSERs waits before the next, so other clients' commands get in. */
const PAGE_PAUSE_MS = 10;

/**
 * Keeps Redis's sidecar users in line with PostgreSQL: ends rotation grace periods and
 * recreates every user from its stored password hash, so a Redis restarted empty lets each
 * sidecar back in without anyone re-issuing credentials.
 *
 * Rewriting every user on each pass cost 100,000 ACL SETUSERs a minute at 100,000 clusters, a
 * stall of every Redis client once a minute (issue 19). So a pass (`reconcile`) writes only what
 * can be wrong: the users whose cluster changed since the last pass (a registration or rotation
 * whose own ACL write failed after its commit) and those whose grace period ended; it writes all
 * of them (`sync`) when a node has lost the marker user a full pass leaves behind (a Redis
 * restarted empty, an ACL reset), when this worker has not made a full pass yet, and every
 * `fullEveryMs` as a backstop.
 */
export class SidecarAclSync {
  private lastFull: number | undefined;
  private lastPass: number | undefined;

  private readonly fullEveryMs: number;
  private readonly clockSlackMs: number;

  constructor(
    private readonly db: PrismaClient,
    private readonly redis: RedisClient,
    private readonly prefix: string,
    options: {
      /** A full pass at least this often. */
      fullEveryMs?: number;
      /**
       * An incremental pass also writes the users changed this long before the previous pass
       * began: `updatedAt` is the API's clock, the pass's times the worker's.
       */
      clockSlackMs?: number;
    } = {},
  ) {
    this.fullEveryMs = options.fullEveryMs ?? 3_600_000;
    this.clockSlackMs = options.clockSlackMs ?? 5 * 60_000;
  }

  /** The ACL user a full pass leaves on every node: it never logs in (no password, off). */
  private get marker(): string {
    return `fleet-acl-synced.${this.prefix}`;
  }

  /** One periodic pass: ends grace periods, then a full or an incremental write. */
  async reconcile(now = new Date()): Promise<{ users: number; expired: number; full: boolean }> {
    const fullDue =
      this.lastFull === undefined ||
      now.getTime() - this.lastFull >= this.fullEveryMs ||
      (await this.markerMissing());
    if (fullDue) return { ...(await this.sync(now)), full: true };
    const since = new Date((this.lastPass ?? 0) - this.clockSlackMs);
    const passStarted = now.getTime();
    const ended = await this.endGracePeriods(now);
    // A fleet registered in bulk changes many rows at once: paged like a full pass.
    const users = await this.writePaged({
      OR: [{ updatedAt: { gte: since } }, { id: { in: ended } }],
    });
    await this.cutEnded(ended);
    this.lastPass = passStarted;
    return { users, expired: ended.length, full: false };
  }

  /** Every user, page by page; then the marker on every node. */
  async sync(now = new Date()): Promise<{ users: number; expired: number }> {
    const passStarted = now.getTime();
    const ended = await this.endGracePeriods(now);
    const users = await this.writePaged({});
    await this.cutEnded(ended);
    await onEveryRedisNode(this.redis, (node) =>
      node.call('ACL', 'SETUSER', this.marker, 'reset', 'off'),
    );
    this.lastFull = passStarted;
    this.lastPass = passStarted;
    return { users, expired: ended.length };
  }

  /** The users of the clusters `where` selects, 1,000 a page, pausing between pages. */
  private async writePaged(where: Prisma.ClusterWhereInput): Promise<number> {
    let users = 0;
    let cursor: string | undefined;
    for (;;) {
      const clusters = await this.db.cluster.findMany({
        where,
        select: { id: true, redisPasswordHash: true, previousRedisPasswordHash: true },
        orderBy: { id: 'asc' },
        take: 1000,
        ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
      });
      if (clusters.length === 0) return users;
      await this.writeUsers(clusters);
      users += clusters.length;
      cursor = clusters.at(-1)!.id;
      await new Promise((resolve) => setTimeout(resolve, PAGE_PAUSE_MS));
    }
  }

  private async markerMissing(): Promise<boolean> {
    const found = await onEveryRedisNode(this.redis, (node) =>
      node.call('ACL', 'GETUSER', this.marker),
    );
    return found.some((user) => user === null);
  }

  /** The clusters whose previous credentials ended by `now`, forgotten in PostgreSQL. */
  private async endGracePeriods(now: Date): Promise<string[]> {
    const ended = await this.db.cluster.findMany({
      where: { previousCredentialsExpireAt: { lte: now } },
      select: { id: true },
    });
    if (ended.length === 0) return [];
    await this.db.cluster.updateMany({
      where: { id: { in: ended.map((c) => c.id) }, previousCredentialsExpireAt: { lte: now } },
      data: {
        previousReportTokenHash: null,
        previousRedisPasswordHash: null,
        previousCredentialsExpireAt: null,
      },
    });
    return ended.map((c) => c.id);
  }

  private async writeUsers(
    clusters: { id: string; redisPasswordHash: string; previousRedisPasswordHash: string | null }[],
  ): Promise<void> {
    if (clusters.length === 0) return;
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
  }

  /**
   * The users now accept only the current password: cut connections opened with the old one
   * (every connection of the user; the sidecar reconnects with its current password).
   */
  private async cutEnded(ended: string[]): Promise<void> {
    for (const id of ended) await killSidecarConnections(this.redis, id);
  }
}

export async function startAclSync(deps: {
  db: PrismaClient;
  producer: RedisClient;
  workerConnection: RedisClient;
  prefix: string;
  everyMs: number;
  /** A full rewrite of every user at least this often (see SidecarAclSync). */
  fullEveryMs: number;
  log: Logger;
}): Promise<{ close(): Promise<void> }> {
  const sync = new SidecarAclSync(deps.db, deps.producer, deps.prefix, {
    fullEveryMs: deps.fullEveryMs,
  });
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
      const result = await sync.reconcile();
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

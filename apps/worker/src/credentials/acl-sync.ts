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

const credentialColumns = {
  id: true,
  redisPasswordHash: true,
  previousRedisPasswordHash: true,
  previousCredentialsExpireAt: true,
} as const;
type CredentialRow = {
  id: string;
  redisPasswordHash: string;
  previousRedisPasswordHash: string | null;
  previousCredentialsExpireAt: Date | null;
};

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
    const expired = await this.endGracePeriods(now);
    // A fleet registered in bulk changes many rows at once: paged like a full pass.
    const users = await this.writePaged({ updatedAt: { gte: since } }, now);
    this.lastPass = passStarted;
    return { users, expired, full: false };
  }

  /** Every user, page by page. */
  async sync(now = new Date()): Promise<{ users: number; expired: number }> {
    const passStarted = now.getTime();
    // The marker first: a Redis that loses its users during the pass loses the marker with them,
    // so the next pass is a full one again.
    await onEveryRedisNode(this.redis, (node) =>
      node.call('ACL', 'SETUSER', this.marker, 'reset', 'off'),
    );
    let expired: number;
    let users: number;
    try {
      expired = await this.endGracePeriods(now);
      users = await this.writePaged({}, now);
    } catch (err) {
      // The marker now says "synced" while later pages were never written: every replica's next
      // pass must be a full one again, not only this one's.
      this.lastFull = undefined;
      await onEveryRedisNode(this.redis, (node) => node.call('ACL', 'DELUSER', this.marker)).catch(
        () => undefined,
      );
      throw err;
    }
    this.lastFull = passStarted;
    this.lastPass = passStarted;
    return { users, expired };
  }

  /**
   * The users of the clusters `where` selects, 1,000 a page (keyset on id, so a cluster deleted
   * meanwhile ends no page early), pausing between pages.
   */
  private async writePaged(where: Prisma.ClusterWhereInput, now: Date): Promise<number> {
    let users = 0;
    let after: string | undefined;
    for (;;) {
      const clusters = await this.db.cluster.findMany({
        where: after ? { AND: [where, { id: { gt: after } }] } : where,
        select: credentialColumns,
        orderBy: { id: 'asc' },
        take: 1000,
      });
      if (clusters.length === 0) return users;
      await this.writeUsers(clusters, now);
      users += clusters.length;
      after = clusters.at(-1)!.id;
      await new Promise((resolve) => setTimeout(resolve, PAGE_PAUSE_MS));
    }
  }

  private async markerMissing(): Promise<boolean> {
    const found = await onEveryRedisNode(this.redis, (node) =>
      node.call('ACL', 'GETUSER', this.marker),
    );
    return found.some((user) => user === null);
  }

  /**
   * Rotations whose grace period ended by `now`: the user accepts only the current password, the
   * connections opened with the old one are cut, and only then is it forgotten in PostgreSQL, so
   * a pass that fails on the way repeats all of it. Returns how many ended.
   */
  private async endGracePeriods(now: Date): Promise<number> {
    const ended = await this.db.cluster.findMany({
      where: { previousCredentialsExpireAt: { lte: now } },
      select: credentialColumns,
    });
    if (ended.length === 0) return 0;
    await this.writeUsers(ended, now);
    for (const { id } of ended) await killSidecarConnections(this.redis, id);
    await this.db.cluster.updateMany({
      where: { id: { in: ended.map((c) => c.id) }, previousCredentialsExpireAt: { lte: now } },
      data: {
        previousReportTokenHash: null,
        previousRedisPasswordHash: null,
        previousCredentialsExpireAt: null,
      },
    });
    return ended.length;
  }

  /** A previous password is written only while its grace period lasts. */
  private async writeUsers(clusters: CredentialRow[], now: Date): Promise<void> {
    if (clusters.length === 0) return;
    const commands = clusters.map((c) =>
      sidecarAclSetUser(
        this.prefix,
        c.id,
        [
          c.redisPasswordHash,
          (c.previousCredentialsExpireAt?.getTime() ?? 0) > now.getTime()
            ? c.previousRedisPasswordHash
            : null,
        ].filter((h): h is string => Boolean(h)),
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

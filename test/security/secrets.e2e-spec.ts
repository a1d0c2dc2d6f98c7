import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  eventually,
  startPrivateRedis,
  testQueuePrefix,
  type PrivateRedis,
  type TestDatabase,
} from '@fleet/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
// Tests boot the real worker in process; the apps-never-import-apps rule is about app code.
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';

interface Secrets {
  reportToken: string;
  redisPassword: string;
  redisUrl: string;
  cluster: { uid: string };
}

/**
 * Issue 17, point 12: registerCluster and rotateClusterCredentials return their one-time secrets
 * even when Redis fails after the PostgreSQL commit, and the worker's ACL sync repairs Redis.
 * Redis is made to fail exactly there: the test holds a lock the mutation's transaction waits on,
 * stops its own Redis (the request has passed the guard, which counts it in Redis), then lets the
 * transaction commit.
 */
describe('security: one-time secrets survive a Redis failure after the commit', () => {
  let redis: PrivateRedis;
  let db: TestDatabase;
  let api: RunningApi;
  let sql: pg.Client;
  let prefix: string;

  const SECRETS = 'reportToken redisPassword redisUrl cluster { uid }';
  const post = async <T>(query: string, variables: Record<string, unknown>) => {
    const res = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.adminToken}` },
      body: JSON.stringify({ query, variables }),
      // Far beyond the API's own bound: without it the request waits for Redis forever.
      signal: AbortSignal.timeout(20_000),
    });
    return (await res.json()) as { data?: T; errors?: unknown[] };
  };

  /** Runs `mutation` with Redis stopped between the guard and the commit; Redis stays down. */
  const withRedisLostAtCommit = async <T>(query: string, variables: Record<string, unknown>) => {
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE "AuditEvent" IN EXCLUSIVE MODE');
      const response = post<T>(query, variables);
      await eventually(
        async () => {
          const { rows } = await sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = '"AuditEvent"'::regclass`,
          );
          return rows[0]!.n > 0 ? true : undefined;
        },
        { timeoutMs: 15_000, what: 'the mutation to wait on the AuditEvent lock' },
      );
      await redis.stop();
      await blocker.query('ROLLBACK');
      return await response;
    } finally {
      await blocker.end();
    }
  };
  const canLogIn = async (redisUrl: string) => {
    const client = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    // Refusals before the sync are expected; connect() reports them.
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  };

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, REDIS_URL: redis.url, QUEUE_PREFIX: prefix });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });

  afterAll(async () => {
    await sql?.end();
    await api?.app.close();
    await db?.drop();
    await redis?.stop();
  });

  it('returns the secrets of registerCluster and rotateClusterCredentials, and the ACL sync lets the sidecar in once Redis is back', async () => {
    const before = await post<{ registerCluster: Secrets }>(
      `mutation { registerCluster(input: { name: "rotated", topology: STANDALONE, platform: AWS, region: "us-east-1" }) { ${SECRETS} } }`,
      {},
    );
    const rotated = before.data!.registerCluster;
    expect(await canLogIn(rotated.redisUrl)).toBe(true);

    const registered = await withRedisLostAtCommit<{ registerCluster: Secrets }>(
      `mutation { registerCluster(input: { name: "lost", topology: STANDALONE, platform: AWS, region: "us-east-1" }) { ${SECRETS} } }`,
      {},
    );
    expect(registered.errors).toBeUndefined();
    const lost = registered.data!.registerCluster;
    expect(lost.redisPassword).toMatch(/^[\w-]{40,}$/);
    expect(lost.reportToken).toMatch(/^[\w-]{40,}$/);

    redis = await startPrivateRedis(redis.port);
    // The API's rate limiter refuses writes (SERVICE_UNAVAILABLE) until its own connection is
    // back; a rotation of a cluster that does not exist says when writes pass the guard again.
    await eventually(
      async () => {
        const probe = await post(
          `mutation { rotateClusterCredentials(clusterId: "00000000-0000-4000-8000-000000000000") { reportToken } }`,
          {},
        );
        const code = (probe.errors?.[0] as { extensions?: { code?: string } } | undefined)
          ?.extensions?.code;
        return code === 'SERVICE_UNAVAILABLE' ? undefined : code;
      },
      { timeoutMs: 15_000, what: 'the API to take writes again after Redis is back' },
    );
    const rotation = await withRedisLostAtCommit<{ rotateClusterCredentials: Secrets }>(
      `mutation($id: ID!) { rotateClusterCredentials(clusterId: $id) { ${SECRETS} } }`,
      { id: rotated.cluster.uid },
    );
    expect(rotation.errors).toBeUndefined();
    const renewed = rotation.data!.rotateClusterCredentials;
    expect(renewed.redisPassword).not.toBe(rotated.redisPassword);

    // What was committed is what was returned.
    const { rows } = await sql.query<{ name: string; redisPasswordHash: string }>(
      `SELECT name, "redisPasswordHash" FROM "Cluster" ORDER BY name`,
    );
    const { createHash } = await import('node:crypto');
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(rows).toEqual([
      { name: 'lost', redisPasswordHash: sha(lost.redisPassword) },
      { name: 'rotated', redisPasswordHash: sha(renewed.redisPassword) },
    ]);

    // Redis comes back empty; the worker's ACL sync recreates both users from PostgreSQL.
    redis = await startPrivateRedis(redis.port);
    const worker = await startWorker({
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      ACL_SYNC_SECONDS: '1',
    });
    try {
      for (const [what, url] of [
        ['the registered sidecar', lost.redisUrl],
        ['the rotated sidecar (new password)', renewed.redisUrl],
        ['the rotated sidecar (old password, in its grace period)', rotated.redisUrl],
      ] as const) {
        await eventually(async () => ((await canLogIn(url)) ? true : undefined), {
          timeoutMs: 20_000,
          what: `${what} to log in to Redis`,
        });
      }
    } finally {
      await worker.close();
    }
  }, 120_000);
});

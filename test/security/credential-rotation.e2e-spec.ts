import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';

/**
 * Issue 17 point 10: a rotation must really cut off a leaked credential. Redis connections
 * opened with the old password used to survive the ACL change, and the grace period was a
 * global hour. Through the real API, worker and Redis: `gracePeriodSeconds` (0 allowed), and
 * when it ends the old password's open connections are cut and cannot come back.
 */
const REGISTER = `mutation { registerCluster(input: { name: "rotating", topology: STANDALONE, platform: AWS, region: "us-east-1" }) {
  redisUrl cluster { id uid } } }`;
const ROTATE = `mutation($id: ID!, $grace: Int) { rotateClusterCredentials(clusterId: $id, gracePeriodSeconds: $grace) { redisUrl previousValidUntil } }`;

describe('credential rotation cuts the old Redis connections', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: { id: string; uid: string };
  let firstUrl: string;
  const open: Redis[] = [];
  const prefix = testQueuePrefix();

  /** A connection as a sidecar (or whoever holds its password) opens it; it never reconnects. */
  const connect = (url: string) => {
    const redis = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined);
    open.push(redis);
    const ended = new Promise<'ended'>((resolve) => redis.once('end', () => resolve('ended')));
    return { redis, ended };
  };
  const rotate = async (grace: number | null) => {
    const res = await api.admin<{ rotateClusterCredentials: { redisUrl: string } }>(ROTATE, {
      id: cluster.id,
      grace,
    });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.rotateClusterCredentials.redisUrl;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, QUEUE_PREFIX: prefix };
    api = await startApi(env);
    // The periodic sync is far away: the end of a grace period must not wait for it.
    worker = await startWorker({ ...env, LOG_LEVEL: 'warn', ACL_SYNC_SECONDS: '3600' });
    const res = await api.admin<{
      registerCluster: { redisUrl: string; cluster: { id: string; uid: string } };
    }>(REGISTER);
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    cluster = res.data.registerCluster.cluster;
    firstUrl = res.data.registerCluster.redisUrl;
  });

  afterAll(async () => {
    for (const r of open) r.disconnect();
    await worker?.close();
    await api?.app.close();
    const admin = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    if (cluster) await admin.call('ACL', 'DELUSER', `sidecar.${cluster.uid}`);
    admin.disconnect();
    await db?.drop();
  });

  it('refuses a negative or over-long grace period, naming the argument', async () => {
    for (const grace of [-1, 8 * 86_400]) {
      const res = await api.admin(ROTATE, { id: cluster.id, grace });
      expect(res.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'gracePeriodSeconds',
      });
    }
  });

  it('with no grace period, cuts the old password’s open connection at once', async () => {
    const leaked = connect(firstUrl);
    expect(await leaked.redis.ping()).toBe('PONG');
    const secondUrl = await rotate(0);
    expect(await leaked.ended).toBe('ended');
    const again = connect(firstUrl);
    await expect(again.redis.ping()).rejects.toThrow(/WRONGPASS|NOAUTH|Connection is closed/);
    const current = connect(secondUrl);
    expect(await current.redis.ping()).toBe('PONG');
    firstUrl = secondUrl;
  });

  it('with a grace period, keeps the old password until it ends, then cuts it', async () => {
    const old = connect(firstUrl);
    expect(await old.redis.ping()).toBe('PONG');
    const nextUrl = await rotate(1);
    // Still within the grace period (a second): the old connection works.
    const during = connect(firstUrl);
    expect(await during.redis.ping()).toBe('PONG');
    // The worker ends the grace period: both connections opened with the old password are cut.
    expect(await old.ended).toBe('ended');
    expect(await during.ended).toBe('ended');
    const after = connect(firstUrl);
    await expect(after.redis.ping()).rejects.toThrow(/WRONGPASS|NOAUTH|Connection is closed/);
    const current = connect(nextUrl);
    expect(await current.redis.ping()).toBe('PONG');
  });
});

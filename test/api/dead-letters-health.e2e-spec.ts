import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEAD_LETTER_QUEUE, queueLabel, RECONCILE_QUEUE, type DeadLetter } from '@fleet/contracts';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { query, registerClusters, type RegisteredCluster } from '../faults/fleet-fixture.js';
import { startApi, type RunningApi } from './start-api.js';

describe('dead letters and health history over GraphQL', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let redis: Redis;
  let prefix: string;
  let cluster: RegisteredCluster;

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
    [cluster] = (await registerClusters(api, 1, 'history')) as [RegisteredCluster];
  });

  afterAll(async () => {
    await api?.app.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await db?.drop();
  });

  it('lists dead letters to admins only and redrives them onto their queue', async () => {
    const dlq = new Queue<DeadLetter>(DEAD_LETTER_QUEUE, { connection: redis, prefix });
    const data = { clusterId: cluster.uid, generation: 1 };
    await dlq.add(
      'dead-letter',
      {
        queue: queueLabel(RECONCILE_QUEUE), // as the worker records it
        jobId: `${cluster.uid}.1`,
        name: 'reconcile',
        data,
        attempts: 10,
        attemptsMade: 10,
        failedReason: 'boom',
        failedAt: new Date().toISOString(),
      },
      { jobId: `reconcile.${cluster.uid}.1` },
    );
    const viewer = api.as(await api.createToken('VIEWER'));
    const LIST = `{ deadLetters(first: 10) { totalCount nodes { id queue jobId failedReason attemptsMade data } } }`;
    expect((await viewer(LIST)).errors?.[0]).toBeDefined();
    const listed = await api.admin<{
      deadLetters: {
        totalCount: number;
        nodes: { id: string; queue: string; failedReason: string }[];
      };
    }>(LIST);
    expect(listed.data?.deadLetters.totalCount).toBe(1);
    expect(listed.data?.deadLetters.nodes[0]).toMatchObject({
      queue: 'reconcile',
      failedReason: 'boom',
    });

    const redriven = await api.admin(`mutation($id: ID!) { redriveDeadLetter(id: $id) { id } }`, {
      id: listed.data!.deadLetters.nodes[0]!.id,
    });
    expect(redriven.errors).toBeUndefined();
    const reconcile = new Queue(RECONCILE_QUEUE, { connection: redis, prefix });
    const waiting = await reconcile.getJobs(['waiting']);
    expect(
      waiting
        .filter((j) => j.id?.startsWith(`${cluster.uid}.1.redrive.`))
        .map((j) => j.data as unknown),
    ).toEqual([data]);
    expect(
      (await api.admin<{ deadLetters: { totalCount: number } }>(LIST)).data?.deadLetters.totalCount,
    ).toBe(0);
    expect(
      (await api.admin<{ redriveAllDeadLetters: number }>(`mutation { redriveAllDeadLetters }`))
        .data?.redriveAllDeadLetters,
    ).toBe(0);
    await Promise.all([dlq.close(), reconcile.close()]);
  });

  it('answers Cluster.health from raw samples for a day and from roll-ups for a month', async () => {
    const now = Date.now();
    await query(
      db.url,
      `INSERT INTO "HealthSample" ("clusterId", "observedAt", "observedGeneration", available, degraded, progressing, metrics)
       SELECT $1::uuid, to_timestamp($2 / 1000.0) - make_interval(secs => i * 30), 1, i % 4 <> 0, i % 4 = 0, false,
              jsonb_build_object('nodes', 4, 'vcpus', 16, 'nodeClaimsByState',
                CASE WHEN i % 2 = 0 THEN '{"Ready": 4, "Launched": 2}'::jsonb ELSE '{"Ready": 4}'::jsonb END)
         FROM generate_series(1, 2880) AS i`,
      [cluster.uid, now],
    );
    await query(
      db.url,
      `INSERT INTO "HealthRollup" ("clusterId", bucket, samples, "availableSamples", "degradedSamples", "progressingSamples", "nodesAvg", "nodesMax", "vcpusAvg")
       SELECT $1::uuid, date_trunc('hour', now()) - make_interval(hours => i), 120, 90, 30, 0, 4, 4, 16 FROM generate_series(1, 24 * 30) AS i`,
      [cluster.uid],
    );
    const HEALTH = `query($id: ID!, $from: DateTime!, $to: DateTime!, $step: Int) { cluster(id: $id) {
      health(from: $from, to: $to, step: $step) { at samples available degraded nodes vcpus nodeClaimsByState } } }`;
    type Res = {
      cluster: {
        health: {
          samples: number;
          available: number;
          degraded: number;
          nodes: number;
          nodeClaimsByState: unknown;
        }[];
      };
    };
    const day = await api.admin<Res>(HEALTH, {
      id: cluster.id,
      from: new Date(now - 86_400_000).toISOString(),
      to: new Date(now + 1000).toISOString(),
      step: 3600,
    });
    expect(day.errors).toBeUndefined();
    const points = day.data!.cluster.health;
    expect(points.length).toBeGreaterThanOrEqual(24);
    expect(points.reduce((n, p) => n + p.samples, 0)).toBe(2880);
    expect(points[5]).toMatchObject({ available: 0.75, degraded: 0.25, nodes: 4 });
    // NodeClaims by state, averaged over the step's reports (issue 47): Launched in every other.
    expect(points[5]!.nodeClaimsByState).toEqual({ Ready: 4, Launched: 1 });

    const month = await api.admin<Res>(HEALTH, {
      id: cluster.id,
      from: new Date(now - 30 * 86_400_000).toISOString(),
      to: new Date(now).toISOString(),
    });
    expect(month.errors).toBeUndefined();
    expect(month.data!.cluster.health.reduce((n, p) => n + p.samples, 0)).toBeGreaterThan(
      24 * 29 * 120,
    );
    expect(month.data!.cluster.health[10]).toMatchObject({ available: 0.75, nodes: 4 });
    // The hourly roll-ups keep no states: null, never zeros.
    expect(month.data!.cluster.health[10]!.nodeClaimsByState).toBeNull();
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createTestDatabase,
  startPrivateRedis,
  testQueuePrefix,
  type PrivateRedis,
  type TestDatabase,
} from '@fleet/testing';
import { startApi, type RunningApi } from '../api/start-api.js';
import { registerClusters, type RegisteredCluster } from '../faults/fleet-fixture.js';

/**
 * Issue 17 point 8: the rate limiter runs in the auth guard on every request; with its Redis
 * stopped, requests used to hang on a connection with no command timeout — even pure
 * PostgreSQL reads. Now reads are served uncounted and writes are refused at once (503).
 * This suite stops Redis: it runs its own, never the shared one.
 */
describe('Redis stopped under the API', () => {
  let redis: PrivateRedis;
  let db: TestDatabase;
  let api: RunningApi;
  let cluster: RegisteredCluster;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = await createTestDatabase();
    api = await startApi({
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: testQueuePrefix(),
    });
    [cluster] = (await registerClusters(api, 1, 'outage')) as [RegisteredCluster];
    // Counted normally while Redis is up.
    expect((await api.admin('{ clusters(first: 5) { totalCount } }')).errors).toBeUndefined();
    await redis.stop();
  });

  afterAll(async () => {
    await api?.app.close();
    await db?.drop();
    await redis?.stop();
  });

  it('serves PostgreSQL reads without waiting for Redis', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await api.admin<{ clusters: { totalCount: number } }>(
        '{ clusters(first: 5) { totalCount nodes { name } } }',
      );
      expect(res.errors).toBeUndefined();
      expect(res.data?.clusters).toEqual({ totalCount: 1, nodes: [{ name: 'outage-0' }] });
    }
  });

  it('refuses changes at once with SERVICE_UNAVAILABLE, and reports and heartbeats with 503', async () => {
    const res = await api.admin(
      `mutation($id: ID!) { updateClusterLabels(clusterId: $id, labels: { team: "a" }) { id } }`,
      { id: cluster.id },
    );
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    // Nothing was written.
    const labels = await api.admin<{ cluster: { labels: unknown } }>(
      `query($id: ID!) { cluster(id: $id) { labels } }`,
      { id: cluster.id },
    );
    expect(labels.data?.cluster.labels).toEqual({});

    const report = await fetch(`${api.url}/v1/clusters/${cluster.uid}/status`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${cluster.reportToken}`,
      },
      body: JSON.stringify({
        clusterId: cluster.uid,
        observedGeneration: 1,
        conditions: [],
        reportedAt: new Date().toISOString(),
      }),
    });
    expect(report.status).toBe(503);
    // A heartbeat too: its budget and digest check are one command on the same fail-fast
    // connection, so it is refused at once rather than waiting for Redis.
    const heartbeat = await fetch(`${api.url}/v1/clusters/${cluster.uid}/heartbeat`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${cluster.reportToken}`,
      },
      body: JSON.stringify({ clusterId: cluster.uid, digest: 'a'.repeat(64) }),
    });
    expect(heartbeat.status).toBe(503);
  });

  it('says so in its metrics and readiness, without waiting for Redis', async () => {
    const ready = await fetch(`${api.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ failed: ['redis'] });
    const text = await (await fetch(`${api.url}/metrics`)).text();
    expect(text).toMatch(
      /fleet_api_rate_limiter_unavailable_total\{[^}]*outcome="served"[^}]*\} [1-9]/,
    );
    expect(text).toMatch(
      /fleet_api_rate_limiter_unavailable_total\{[^}]*outcome="refused"[^}]*\} [1-9]/,
    );
  });
});

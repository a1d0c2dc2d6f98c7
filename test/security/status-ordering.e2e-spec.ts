import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Condition } from '@fleet/contracts';
import { Redis } from 'ioredis';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { condition, registerClusters, type RegisteredCluster } from '../faults/fleet-fixture.js';

/**
 * Issue 17 point 11: status ordering used the sidecar's clock and counters, so one report with a
 * future reportedAt froze a cluster's status (every later report looked older) and hid its
 * staleness, and an observedGeneration above the desired one stopped later orders. Through the
 * real API and worker: the API stamps reception time and refuses impossible generations.
 */
interface Status {
  cluster: {
    status: {
      observedGeneration: number;
      lastReportAt: string | null;
      stale: boolean;
      conditions: { type: string; status: string }[];
    };
  };
}
const STATUS = `query($id: ID!) { cluster(id: $id) { status { observedGeneration lastReportAt stale conditions { type status } } } }`;

describe('status ordering uses the fleet clock', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: RegisteredCluster;
  const prefix = testQueuePrefix();

  const post = (body: Record<string, unknown>) =>
    fetch(`${api.url}/v1/clusters/${cluster.uid}/status`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${cluster.reportToken}`,
      },
      body: JSON.stringify({ clusterId: cluster.uid, conditions: [], ...body }),
    });
  const status = async () => {
    const res = await api.admin<Status>(STATUS, { id: cluster.id });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return res.data.cluster.status;
  };
  const degraded = (s: Awaited<ReturnType<typeof status>>) =>
    s.conditions.find((c) => c.type === 'Degraded')?.status;

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, QUEUE_PREFIX: prefix };
    api = await startApi({ ...env, STALE_AFTER_SECONDS: '2' });
    worker = await startWorker({ ...env, LOG_LEVEL: 'warn' });
    [cluster] = (await registerClusters(api, 1, 'ordering')) as [RegisteredCluster];
  });

  afterAll(async () => {
    await worker?.close();
    await api?.app.close();
    const admin = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    if (cluster) await admin.call('ACL', 'DELUSER', `sidecar.${cluster.uid}`);
    admin.disconnect();
    await db?.drop();
  });

  it('a report from the future neither freezes status nor hides staleness', async () => {
    const now = new Date().toISOString();
    const future = new Date(Date.now() + 365 * 86_400_000).toISOString();
    const healthy: Condition[] = [condition('Degraded', 'False', 'AsExpected', now)];
    expect(
      (await post({ observedGeneration: 1, reportedAt: future, conditions: healthy })).status,
    ).toBe(202);
    const first = await eventually(
      async () => {
        const s = await status();
        return degraded(s) === 'False' ? s : undefined;
      },
      { what: 'the future-dated report recorded' },
    );
    // Recorded at the fleet's time, not the sidecar's year-ahead clock.
    expect(new Date(first.lastReportAt!).getTime()).toBeLessThan(
      new Date(future).getTime() - 86_400_000,
    );

    // A later report with an honest clock still moves status forward.
    const failing = [condition('Degraded', 'True', 'ApplyFailed', new Date().toISOString())];
    expect(
      (
        await post({
          observedGeneration: 1,
          reportedAt: new Date().toISOString(),
          conditions: failing,
        })
      ).status,
    ).toBe(202);
    await eventually(async () => (degraded(await status()) === 'True' ? true : undefined), {
      what: 'the later report applied after the future-dated one',
    });

    // With no report for longer than STALE_AFTER_SECONDS the cluster is stale.
    await eventually(async () => ((await status()).stale ? true : undefined), {
      what: 'the cluster reported stale',
    });
  });

  it('refuses an observedGeneration above the desired generation, naming the field', async () => {
    const res = await post({ observedGeneration: 99, reportedAt: new Date().toISOString() });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ field: 'observedGeneration' });
    // Nothing recorded: status still at generation 1, and later orders still apply.
    expect((await status()).observedGeneration).toBe(1);
    const bumped = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { karpenter { generation } } }`,
      { id: cluster.id },
    );
    expect(bumped.data?.setKarpenter.karpenter.generation).toBe(2);
    expect(
      (await post({ observedGeneration: 2, reportedAt: new Date().toISOString() })).status,
    ).toBe(202);
    await eventually(async () => ((await status()).observedGeneration === 2 ? true : undefined), {
      what: 'generation 2 recorded',
    });
  });
});

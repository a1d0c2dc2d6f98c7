import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CONTRACT_VERSION, sidecarQueueName } from '@fleet/contracts';
import { createPrismaClient, type PrismaClient } from '@fleet/database';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from './start-api.js';

const REGISTER = `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1" }) {
  reportToken cluster { id uid } } }`;
const CLUSTER = `query($id: ID!) { cluster(id: $id) {
  karpenter { generation }
  status { sidecar { version contractVersion } conditions { type status reason message } } } }`;

interface ClusterView {
  karpenter: { generation: number };
  status: {
    sidecar: { version: string | null; contractVersion: number } | null;
    conditions: { type: string; status: string; reason: string; message: string }[];
  };
}

/**
 * The fleet knows each sidecar's release and contract from its reports, shows them, and does not
 * send an order of a newer contract to a sidecar that reported an older one.
 */
describe('sidecar versions and the order contract', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let prisma: PrismaClient;
  let queue: Queue;
  let redis: Redis;
  const prefix = testQueuePrefix();
  let legacy: { reportToken: string; cluster: { id: string; uid: string } };
  let fresh: { reportToken: string; cluster: { id: string; uid: string } };

  const report = (sidecar?: { version: string; contractVersion: number }) =>
    fetch(`${api.url}/v1/clusters/${legacy.cluster.uid}/status`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${legacy.reportToken}`,
      },
      body: JSON.stringify({
        clusterId: legacy.cluster.uid,
        observedGeneration: 1,
        conditions: [],
        ...(sidecar ? { sidecar } : {}),
        reportedAt: new Date().toISOString(),
      }),
    }).then((r) => r.status);
  const ordersOf = async (generation: number) =>
    (await queue.getJobs(['waiting', 'prioritized', 'delayed'])).filter(
      (j) => (j.data as { generation: number }).generation === generation,
    );
  const view = async () =>
    (await api.admin<{ cluster: ClusterView }>(CLUSTER, { id: legacy.cluster.id })).data!.cluster;
  const condition = (c: ClusterView, type: string) =>
    c.status.conditions.find((x) => x.type === type);

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    prisma = createPrismaClient(db.url);
    const register = async (name: string) => {
      const res = await api.admin<{ registerCluster: typeof legacy }>(REGISTER, { name });
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      return res.data.registerCluster;
    };
    legacy = await register('legacy');
    fresh = await register('fresh');
    redis = new Redis({ maxRetriesPerRequest: null });
    queue = new Queue(sidecarQueueName(legacy.cluster.uid), { connection: redis, prefix });
  });

  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    const admin = new Redis();
    await admin.call(
      'ACL',
      'DELUSER',
      `sidecar.${legacy.cluster.uid}`,
      `sidecar.${fresh.cluster.uid}`,
    );
    admin.disconnect();
    await prisma?.$disconnect();
    await worker?.close();
    await api?.app.close();
    await db?.drop();
  });

  it('records a report without a sidecar field as contract 1, release unknown', async () => {
    expect(await report()).toBe(202);
    const c = await eventually(async () => ((await view()).status.sidecar ? view() : undefined), {
      timeoutMs: 15_000,
      what: 'the report ingested',
    });
    expect(c.status.sidecar).toEqual({ version: null, contractVersion: 1 });
  });

  it('still sends it the orders contract 1 reads (standalone AWS)', async () => {
    const res = await api.admin(`mutation($id: ID!) { reconcileCluster(clusterId: $id) { id } }`, {
      id: legacy.cluster.id,
    });
    expect(res.errors).toBeUndefined();
    const [job] = await eventually(
      async () => {
        const jobs = (await ordersOf(1)).filter((j) => j.id?.includes('forced'));
        return jobs.length ? jobs : undefined;
      },
      { timeoutMs: 15_000, what: 'the re-sent generation-1 order' },
    );
    expect(job?.data).toMatchObject({ contractVersion: 1, platform: 'AWS' });
  });

  it('does not send it an order only contract 2 reads, and says so on the cluster and the run', async () => {
    // As if registered before registerCluster checked the pair: an order for a platform a
    // contract-1 sidecar would silently treat as standalone AWS.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(`UPDATE "Cluster" SET platform = 'AZURE' WHERE id = $1`, [
        legacy.cluster.uid,
      ]);
    } finally {
      await client.end();
    }
    const res = await api.admin<{ setKarpenter: { karpenter: { generation: number } } }>(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { karpenter { generation } } }`,
      { id: legacy.cluster.id },
    );
    expect(res.data?.setKarpenter.karpenter.generation).toBe(2);
    const c = await eventually(
      async () => {
        const v = await view();
        return condition(v, 'SidecarOutdated')?.status === 'True' ? v : undefined;
      },
      { timeoutMs: 15_000, what: 'SidecarOutdated' },
    );
    const message =
      'the sidecar speaks order contract 1; this order needs contract 2: upgrade the sidecar';
    expect(condition(c, 'SidecarOutdated')).toEqual({
      type: 'SidecarOutdated',
      status: 'True',
      reason: 'ContractTooOld',
      message,
    });
    const run = await prisma.reconcileRun.findUniqueOrThrow({
      where: { clusterId_generation: { clusterId: legacy.cluster.uid, generation: 2 } },
    });
    expect([run.state, run.error]).toEqual(['FAILED', message]);
    expect(await ordersOf(2)).toEqual([]);
  });

  it('clears the condition once the sidecar reports the current contract, and then sends the order', async () => {
    expect(await report({ version: '0.2.0', contractVersion: CONTRACT_VERSION })).toBe(202);
    const c = await eventually(
      async () => {
        const v = await view();
        return condition(v, 'SidecarOutdated')?.status === 'False' ? v : undefined;
      },
      { timeoutMs: 15_000, what: 'SidecarOutdated cleared' },
    );
    expect(condition(c, 'SidecarOutdated')?.reason).toBe('ContractSupported');
    expect(c.status.sidecar).toEqual({ version: '0.2.0', contractVersion: CONTRACT_VERSION });
    const resend = await api.admin(
      `mutation($id: ID!) { reconcileCluster(clusterId: $id) { id } }`,
      { id: legacy.cluster.id },
    );
    expect(resend.errors).toBeUndefined();
    const [job] = await eventually(
      async () => {
        const jobs = await ordersOf(2);
        return jobs.length ? jobs : undefined;
      },
      { timeoutMs: 15_000, what: 'the generation-2 order on the queue' },
    );
    expect(job?.data).toMatchObject({ contractVersion: 2, platform: 'AZURE', generation: 2 });
  });

  it('shows which clusters run which sidecar release', async () => {
    const res = await api.admin<{
      fleetSummary: { bySidecarVersion: { value: string; count: number }[] };
    }>(`query { fleetSummary { bySidecarVersion { value count } } }`);
    expect(res.data?.fleetSummary.bySidecarVersion).toEqual([
      { value: '0.2.0', count: 1 },
      { value: 'unreported', count: 1 },
    ]);
  });
});

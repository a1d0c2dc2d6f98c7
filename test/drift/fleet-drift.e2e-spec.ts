import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sidecarQueueName, type DriftEntry } from '@fleet/contracts';
import { Queue } from 'bullmq';
import pg from 'pg';
import { Redis } from 'ioredis';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { runKfleetInProcess } from '../cli/kfleet-process.js';

const REGISTER = `mutation($name: String!) { registerCluster(input: { name: $name, topology: STANDALONE, platform: AWS, region: "us-east-1" }) {
  reportToken cluster { id uid } } }`;
const SET_POLICY = `mutation($id: ID!, $policy: DriftPolicy!) {
  setKarpenter(clusterId: $id, input: { driftPolicy: $policy }) { karpenter { generation driftPolicy } } }`;
const DRIFTED = `query { clusters(filter: { drifted: true }) { nodes { name status { drifted
  drift { kind name change fields { path manager } correctedAt } } } } }`;

const ENTRY: DriftEntry = {
  target: 'workload',
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  name: 'general',
  change: 'Modified',
  fields: [{ path: '.spec.limits.cpu', manager: 'sre-hand-edit' }],
  detectedAt: '2026-12-01T10:00:00.000Z',
};

/**
 * The fleet's side of drift: the policy is desired state carried in the order, the reported
 * drift is kept in status, and drifted clusters are listed across the fleet (GraphQL, kfleet).
 */
describe('drift across the fleet', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let queue: Queue;
  let redis: Redis;
  const prefix = testQueuePrefix();
  const clusters: Record<string, { reportToken: string; cluster: { id: string; uid: string } }> =
    {};

  const report = (name: string, generation: number, drift: DriftEntry[]) => {
    const c = clusters[name]!;
    return fetch(`${api.url}/v1/clusters/${c.cluster.uid}/status`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${c.reportToken}` },
      body: JSON.stringify({
        clusterId: c.cluster.uid,
        observedGeneration: generation,
        conditions: [
          {
            type: 'Drifted',
            status: drift.some((e) => !e.correctedAt) ? 'True' : 'False',
            reason: drift.some((e) => !e.correctedAt) ? 'LeftInPlace' : 'NoDrift',
            message: 'NodePool general: .spec.limits.cpu by sre-hand-edit',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
        drift,
        reportedAt: new Date().toISOString(),
      }),
    }).then((r) => r.status);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    for (const name of ['east', 'west']) {
      const res = await api.admin<{ registerCluster: (typeof clusters)[string] }>(REGISTER, {
        name,
      });
      if (!res.data) throw new Error(JSON.stringify(res.errors));
      clusters[name] = res.data.registerCluster;
    }
    redis = new Redis({ maxRetriesPerRequest: null });
    queue = new Queue(sidecarQueueName(clusters.east!.cluster.uid), { connection: redis, prefix });
  }, 120_000);

  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    const admin = new Redis();
    for (const c of Object.values(clusters))
      await admin.call('ACL', 'DELUSER', `sidecar.${c.cluster.uid}`);
    admin.disconnect();
    await worker?.close();
    await api?.app.close();
    await db?.drop();
  });

  it('the policy is desired state: a new generation, audited, and REPORT is carried in the order', async () => {
    const res = await api.admin<{
      setKarpenter: { karpenter: { generation: number; driftPolicy: string } };
    }>(SET_POLICY, { id: clusters.east!.cluster.id, policy: 'REPORT' });
    expect(res.data?.setKarpenter.karpenter).toEqual({ generation: 2, driftPolicy: 'REPORT' });
    const order = await eventually(
      async () =>
        (await queue.getJobs(['waiting', 'prioritized', 'delayed'])).find(
          (j) => (j.data as { generation: number }).generation === 2,
        ),
      { timeoutMs: 15_000, what: 'the order of generation 2' },
    );
    expect((order.data as { spec: { driftPolicy?: string } }).spec.driftPolicy).toBe('REPORT');
    const pool = new pg.Pool({ connectionString: db.url });
    try {
      const { rows } = await pool.query<{ action: string; before: string; after: string }>(
        `SELECT action, before->>'driftPolicy' AS before, after->>'driftPolicy' AS after
           FROM "AuditEvent" WHERE "clusterId" = $1 AND action = 'setKarpenter'`,
        [clusters.east!.cluster.uid],
      );
      expect(rows).toEqual([{ action: 'setKarpenter', before: 'CORRECT', after: 'REPORT' }]);
    } finally {
      await pool.end();
    }
  });

  it('refuses a policy that is not one, naming the field', async () => {
    const res = await api.admin(SET_POLICY, { id: clusters.west!.cluster.id, policy: 'IGNORE' });
    expect(JSON.stringify(res.errors)).toMatch(/policy|DriftPolicy/);
  });

  it('keeps reported drift in status and lists drifted clusters (GraphQL and kfleet clusters drift)', async () => {
    expect(await report('east', 2, [ENTRY])).toBe(202);
    expect(await report('west', 1, [{ ...ENTRY, correctedAt: '2026-12-01T10:00:01.000Z' }])).toBe(
      202,
    );
    const listed = await eventually(
      async () => {
        const res = await api.admin<{
          clusters: { nodes: { name: string; status: { drift: unknown[] } }[] };
        }>(DRIFTED);
        const nodes = res.data?.clusters.nodes ?? [];
        return nodes.length > 0 ? nodes : undefined;
      },
      { timeoutMs: 15_000, what: 'a drifted cluster listed' },
    );
    // west's drift was put back: it is not drifted, so only east is listed.
    expect(listed).toEqual([
      {
        name: 'east',
        status: {
          drifted: true,
          drift: [
            {
              kind: 'NodePool',
              name: 'general',
              change: 'Modified',
              fields: [{ path: '.spec.limits.cpu', manager: 'sre-hand-edit' }],
              correctedAt: null,
            },
          ],
        },
      },
    ]);
    const out = await runKfleetInProcess(['clusters', 'drift'], {
      KFLEET_API_URL: api.url,
      KFLEET_TOKEN: api.adminToken,
    });
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout.split('\n')[0]).toMatch(/^CLUSTER\s+POLICY\s+OBJECT\s+CHANGE\s+FIELDS/);
    expect(out.stdout).toMatch(
      /east\s+REPORT\s+NodePool\/general\s+Modified\s+\.spec\.limits\.cpu \(sre-hand-edit\)/,
    );
    expect(out.stdout).not.toContain('west');
  });
});

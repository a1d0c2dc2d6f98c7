import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { REPORT_NODECLAIMS_MAX, type StatusReport } from '@fleet/contracts';
import { startWorker } from '../../apps/worker/src/main.js';
import { postReport, registerClusters, type RegisteredCluster } from '../faults/fleet-fixture.js';
import { startApi, type RunningApi } from './start-api.js';

/**
 * What Karpenter did, per cluster (issue 47, point 2): the NodeClaims a sidecar reports go
 * through the API and the worker into Cluster.status.nodeClaims; a report over the bound is
 * refused whole, naming the field.
 */
describe('reported NodeClaims', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let cluster: RegisteredCluster;

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    [cluster] = (await registerClusters(api, 1, 'claims')) as [RegisteredCluster];
  }, 60_000);

  afterAll(async () => {
    await worker?.close();
    await api?.app.close();
    await db?.drop();
  });

  const report = (nodeClaims: unknown[]): StatusReport =>
    ({
      clusterId: cluster.uid,
      observedGeneration: 1,
      conditions: [],
      metrics: {},
      csrDecisions: [],
      nodeClaims,
      reportedAt: new Date().toISOString(),
    }) as StatusReport;

  it('stores the reported NodeClaims, the launch failure with its reason, and serves them', async () => {
    await postReport(
      api.url,
      cluster,
      report([
        {
          name: 'general-x7k2p',
          nodePool: 'general',
          state: 'Pending',
          instanceType: 'm5.large',
          createdAt: '2026-12-05T03:00:00.000Z',
          launchFailure: {
            reason: 'InsufficientCapacityError',
            message: 'no m5.large capacity in us-east-1a',
          },
        },
        {
          name: 'general-q9w4z',
          nodePool: 'general',
          nodeName: 'ip-10-0-1-7.ec2.internal',
          state: 'Ready',
          instanceType: 'm6i.xlarge',
          zone: 'us-east-1b',
          capacityType: 'spot',
          createdAt: '2026-12-05T02:55:00.000Z',
        },
      ]),
    );
    type Res = { cluster: { status: { nodeClaims: Record<string, unknown>[] | null } } };
    const claims = await eventually(
      async () => {
        const res = await api.admin<Res>(
          `query($id: ID!) { cluster(id: $id) { status { nodeClaims {
             name nodePool nodeName instanceType zone capacityType state createdAt
             launchFailure { reason message } } } } }`,
          { id: cluster.id },
        );
        return res.data?.cluster.status.nodeClaims ?? undefined;
      },
      { timeoutMs: 20_000, what: 'the NodeClaims ingested' },
    );
    expect(claims).toEqual([
      {
        name: 'general-x7k2p',
        nodePool: 'general',
        nodeName: null,
        instanceType: 'm5.large',
        zone: null,
        capacityType: null,
        state: 'Pending',
        createdAt: '2026-12-05T03:00:00.000Z',
        launchFailure: {
          reason: 'InsufficientCapacityError',
          message: 'no m5.large capacity in us-east-1a',
        },
      },
      {
        name: 'general-q9w4z',
        nodePool: 'general',
        nodeName: 'ip-10-0-1-7.ec2.internal',
        instanceType: 'm6i.xlarge',
        zone: 'us-east-1b',
        capacityType: 'spot',
        state: 'Ready',
        createdAt: '2026-12-05T02:55:00.000Z',
        launchFailure: null,
      },
    ]);
  });

  it('refuses a report with more NodeClaims than the bound, naming the field', async () => {
    const many = Array.from({ length: REPORT_NODECLAIMS_MAX + 1 }, (_, i) => ({
      name: `general-${i}`,
      state: 'Ready',
      createdAt: '2026-12-05T03:00:00.000Z',
    }));
    await expect(postReport(api.url, cluster, report(many))).rejects.toThrow(
      /report refused: 400 .*nodeClaims/,
    );
  });
});

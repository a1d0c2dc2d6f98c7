import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { RECONCILE_QUEUE } from '@fleet/contracts';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startApi, type Gql } from './start-api.js';

const CLUSTER_FIELDS = `id uid name karpenter { generation enabled clusterAutoscalerMode logLevel featureGates }
  nodePools { name spec } status { observedGeneration } inSync`;
const REGISTER = `mutation($input: RegisterClusterInput!) {
  registerCluster(input: $input) { reportToken cluster { ${CLUSTER_FIELDS} } } }`;
const SET_KARPENTER = `mutation($id: ID!, $input: SetKarpenterInput!) {
  setKarpenter(clusterId: $id, input: $input) { ${CLUSTER_FIELDS} } }`;
const UPSERT_NODEPOOL = `mutation($id: ID!, $input: UpsertNodePoolInput!) {
  upsertNodePool(clusterId: $id, input: $input) { ${CLUSTER_FIELDS} } }`;
const DELETE_NODEPOOL = `mutation($id: ID!, $name: String!) {
  deleteNodePool(clusterId: $id, name: $name) { ${CLUSTER_FIELDS} } }`;

const validNodePoolSpec = {
  template: {
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    },
  },
  limits: { cpu: '100' },
};

describe('GraphQL mutations (real API, PostgreSQL and Redis)', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let gql: Gql;
  let sql: pg.Client;
  let redis: Redis;
  let reconcileQueue: Queue;
  let clusterId: string;
  let clusterUid: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    const started = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    app = started.app;
    gql = started.admin;
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    redis = new Redis({ maxRetriesPerRequest: null });
    reconcileQueue = new Queue(RECONCILE_QUEUE, { connection: redis, prefix });
    const res = await gql<{ registerCluster: { cluster: { id: string } } }>(REGISTER, {
      input: {
        name: 'prod-east',
        topology: 'STANDALONE',
        platform: 'AWS',
        region: 'us-east-1',
        labels: { env: 'prod' },
      },
    });
    expect(res.errors).toBeUndefined();
    clusterId = res.data!.registerCluster.cluster.id;
    clusterUid = (res.data!.registerCluster.cluster as unknown as { uid: string }).uid;
  });

  afterAll(async () => {
    await reconcileQueue.obliterate({ force: true });
    await reconcileQueue.close();
    redis.disconnect();
    await sql.end();
    await app.close();
    await db.drop();
  });

  /** Every table a mutation may touch, to prove a refused mutation wrote nothing. */
  async function snapshot(): Promise<unknown> {
    const tables = ['Cluster', 'DesiredState', 'NodePool', 'ReconcileRun', 'AuditEvent'];
    const rows = await Promise.all(
      tables.map((t) =>
        sql.query<Record<string, unknown>>(`SELECT * FROM "${t}" ORDER BY 1`).then((r) => r.rows),
      ),
    );
    return { rows, jobs: await reconcileQueue.count() };
  }

  async function expectRefused(
    query: string,
    variables: Record<string, unknown>,
    code: string,
    field: string | RegExp,
  ) {
    const before = await snapshot();
    const res = await gql(query, variables);
    expect(res.data ?? null).toBeNull();
    const error = res.errors?.[0];
    expect(error?.extensions?.code).toBe(code);
    if (typeof field === 'string') expect(error?.extensions?.field).toBe(field);
    else expect(error?.message).toMatch(field);
    expect(await snapshot()).toEqual(before);
  }

  it('registers a cluster with generation 1 and a reconcile request', async () => {
    const res = await gql<{
      cluster: {
        name: string;
        karpenter: { generation: number; enabled: boolean; featureGates: unknown };
      };
    }>(`query($id: ID!) { cluster(id: $id) { ${CLUSTER_FIELDS} } }`, { id: clusterId });
    expect(res.data?.cluster).toMatchObject({
      name: 'prod-east',
      karpenter: { generation: 1, enabled: false, featureGates: { Drift: true } },
    });
    expect(await reconcileQueue.getJob(`${clusterUid}.1`)).toBeDefined();
  });

  it('setKarpenter bumps the generation once per change and enqueues it', async () => {
    const res = await gql<{
      setKarpenter: {
        karpenter: { generation: number; enabled: boolean; clusterAutoscalerMode: string };
      };
    }>(SET_KARPENTER, {
      id: clusterId,
      input: { enabled: true, clusterAutoscalerMode: 'DISABLE' },
    });
    expect(res.errors).toBeUndefined();
    expect(res.data?.setKarpenter.karpenter).toMatchObject({
      generation: 2,
      enabled: true,
      clusterAutoscalerMode: 'DISABLE',
    });
    const job = await reconcileQueue.getJob(`${clusterUid}.2`);
    expect(job?.data).toEqual({ clusterId: clusterUid, generation: 2 });
    const runs = await sql.query(
      'SELECT generation, state FROM "ReconcileRun" ORDER BY generation',
    );
    expect(runs.rows).toEqual([
      { generation: 1, state: 'QUEUED' },
      { generation: 2, state: 'QUEUED' },
    ]);
  });

  it('upserts and deletes a NodePool', async () => {
    const up = await gql<{
      upsertNodePool: { nodePools: { name: string }[]; karpenter: { generation: number } };
    }>(UPSERT_NODEPOOL, { id: clusterId, input: { name: 'general', spec: validNodePoolSpec } });
    expect(up.errors).toBeUndefined();
    expect(up.data?.upsertNodePool.nodePools.map((p) => p.name)).toEqual(['general']);
    const del = await gql<{
      deleteNodePool: { nodePools: unknown[]; karpenter: { generation: number } };
    }>(DELETE_NODEPOOL, { id: clusterId, name: 'general' });
    expect(del.data?.deleteNodePool.nodePools).toEqual([]);
    expect(del.data?.deleteNodePool.karpenter.generation).toBe(
      up.data!.upsertNodePool.karpenter.generation + 1,
    );
  });

  describe('bad input is refused with the field and the reason, and writes nothing', () => {
    const cluster = (over: Record<string, unknown>) => ({
      input: {
        name: 'ok-name',
        topology: 'STANDALONE',
        platform: 'AWS',
        region: 'us-east-1',
        ...over,
      },
    });

    it.each([
      ['an upper-case name', { name: 'Prod_East' }, 'input.name'],
      ['an empty name', { name: '' }, 'input.name'],
      ['a 64-character name', { name: 'a'.repeat(64) }, 'input.name'],
      ['a duplicate name', { name: 'prod-east' }, 'input.name'],
      ['a bad region', { region: 'US East' }, 'input.region'],
      ['a bad label key', { labels: { 'bad key': 'x' } }, 'input.labels.bad key'],
      ['a label value too long', { labels: { env: 'x'.repeat(64) } }, 'input.labels.env'],
      [
        'a hosted cluster without its HCP namespace',
        { topology: 'HOSTED', managementCluster: 'mgmt-1' },
        'input.hcpNamespace',
      ],
    ])('registerCluster: %s', async (_what, over, field) => {
      await expectRefused(REGISTER, cluster(over), 'BAD_USER_INPUT', field);
    });

    it('registerCluster: an unknown platform is refused by the schema', async () => {
      const before = await snapshot();
      const res = await gql(REGISTER, cluster({ platform: 'GCP' }));
      expect(res.errors?.[0]?.message).toMatch(/Platform/);
      expect(await snapshot()).toEqual(before);
    });

    it.each([
      ['a lower-case feature gate', { featureGates: { drift: true } }, 'input.featureGates.drift'],
      [
        'a non-boolean feature gate',
        { featureGates: { Drift: 'yes' } },
        'input.featureGates.Drift',
      ],
      ['a negative expectedGeneration', { expectedGeneration: -1 }, 'input.expectedGeneration'],
      [
        'a Karpenter version the fleet ships no CRDs for',
        { karpenterVersion: '1.12.0' },
        'input.karpenterVersion',
      ],
      [
        'an operand image by tag, not digest',
        { operandImage: 'public.ecr.aws/karpenter/controller:1.14.1' },
        'input.operandImage',
      ],
      [
        'a malformed SQS queue name',
        { interruptionQueue: 'spot events!' },
        'input.interruptionQueue',
      ],
      [
        'a web-identity role that is not an IAM role ARN',
        { webIdentityRoleArn: 'arn:aws:iam::123456789012:user/karpenter' },
        'input.webIdentityRoleArn',
      ],
    ])('setKarpenter: %s', async (_what, input, field) => {
      await expectRefused(SET_KARPENTER, { id: clusterId, input }, 'BAD_USER_INPUT', field);
    });

    it('setKarpenter: an unknown cluster is NOT_FOUND', async () => {
      await expectRefused(
        SET_KARPENTER,
        { id: '00000000-0000-4000-8000-000000000000', input: { enabled: true } },
        'NOT_FOUND',
        /not found/,
      );
    });

    it('setKarpenter: a malformed cluster ID names the argument', async () => {
      await expectRefused(
        SET_KARPENTER,
        { id: 'prod-east', input: { enabled: true } },
        'BAD_USER_INPUT',
        'clusterId',
      );
    });

    it('setKarpenter: a stale expectedGeneration is a CONFLICT', async () => {
      await expectRefused(
        SET_KARPENTER,
        { id: clusterId, input: { enabled: false, expectedGeneration: 1 } },
        'CONFLICT',
        /generation/,
      );
    });

    const spec = (templateSpec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      ...validNodePoolSpec,
      ...extra,
      template: { spec: { ...validNodePoolSpec.template.spec, ...templateSpec } },
    });

    it.each([
      ['a bad NodePool name', 'Bad_Name', validNodePoolSpec, 'input.name'],
      [
        'an operator the CRD does not know',
        'p',
        spec({
          requirements: [{ key: 'kubernetes.io/arch', operator: 'Equals', values: ['amd64'] }],
        }),
        'input.spec.template.spec.requirements[0].operator',
      ],
      [
        'a nodeClassRef without kind',
        'p',
        spec({ nodeClassRef: { group: 'karpenter.k8s.aws', name: 'default' } }),
        'input.spec.template.spec.nodeClassRef.kind',
      ],
      ['weight above 100', 'p', spec({}, { weight: 101 }), 'input.spec.weight'],
      [
        'a restricted requirement key (CEL rule)',
        'p',
        spec({ requirements: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: ['x'] }] }),
        /input\.spec\.template\.spec\.requirements/,
      ],
      ['an unknown field', 'p', spec({}, { colour: 'blue' }), 'input.spec.colour'],
    ])('upsertNodePool: %s', async (_what, name, nodePoolSpec, field) => {
      await expectRefused(
        UPSERT_NODEPOOL,
        { id: clusterId, input: { name, spec: nodePoolSpec } },
        'BAD_USER_INPUT',
        field,
      );
    });

    it('deleteNodePool: a NodePool that does not exist is NOT_FOUND', async () => {
      await expectRefused(
        DELETE_NODEPOOL,
        { id: clusterId, name: 'absent' },
        'NOT_FOUND',
        /NodePool absent not found/,
      );
    });
  });
});

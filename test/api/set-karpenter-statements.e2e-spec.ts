import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createPrismaClient, type PrismaClient } from '@fleet/database';
import { PROFILE_SETTINGS, clusterSnapshot, effectiveStateOf } from '@fleet/desired-state';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { startApi, type Gql } from './start-api.js';

/**
 * What one desired-state mutation (setKarpenter and the others that are one DesiredStateChange)
 * costs PostgreSQL and Redis, counted on the wire (issue 48, target 3: at 100,000 clusters a
 * mutation is visible within a second only if it is a few statements). The API runs in this
 * process, so every query its pg pool sends passes pg.Client.prototype.query, and every Redis
 * command ioredis' Redis.prototype.sendCommand; nothing else of the API queries PostgreSQL
 * while one request is answered here. Not timed: a statement added back fails it.
 */
const REGISTER = `mutation($input: RegisterClusterInput!) {
  registerCluster(input: $input) { cluster { id uid } } }`;
const FIELDS = `id name karpenter { generation enabled paused clusterAutoscalerMode logLevel featureGates }
  nodePools { name spec } status { observedGeneration } inSync`;
const MUTATIONS = {
  setKarpenter: `mutation($id: ID!, $input: SetKarpenterInput!) {
    setKarpenter(clusterId: $id, input: $input) { ${FIELDS} } }`,
  upsertNodePool: `mutation($id: ID!, $input: UpsertNodePoolInput!) {
    upsertNodePool(clusterId: $id, input: $input) { ${FIELDS} } }`,
  deleteNodePool: `mutation($id: ID!, $name: String!) {
    deleteNodePool(clusterId: $id, name: $name) { ${FIELDS} } }`,
  setNodeClassOverrides: `mutation($id: ID!, $input: NodeClassOverridesInput!) {
    setNodeClassOverrides(clusterId: $id, input: $input) { ${FIELDS} } }`,
};
const nodePool = (capacityType: string) => ({
  template: {
    spec: {
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: [capacityType] }],
    },
  },
  limits: { cpu: '100' },
});

interface Counted {
  sql: string[];
  redis: string[];
}

/** Runs `fn`, returning the SQL statements and Redis commands the process sent meanwhile. */
async function counting(fn: () => Promise<void>): Promise<Counted> {
  const counted: Counted = { sql: [], redis: [] };
  // Taken off the prototypes to be put back unchanged; called only with their own `this`.
  /* eslint-disable @typescript-eslint/unbound-method */
  const query = pg.Client.prototype.query;
  const sendCommand = Redis.prototype.sendCommand;
  /* eslint-enable @typescript-eslint/unbound-method */
  // pg's query() is overloaded; the first argument is the text or a config holding it.
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    counted.sql.push(typeof first === 'string' ? first : (first.text ?? '?'));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof sendCommand>) {
    // The events service's own periodic subscription check is not the mutation's.
    if (!args[0].args.some((a) => String(a).includes('subscription-check')))
      counted.redis.push(args[0].name);
    return sendCommand.apply(this, args);
  };
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = query;
    Redis.prototype.sendCommand = sendCommand;
  }
  return counted;
}

describe('desired-state mutations: statements per change (real API, PostgreSQL and Redis)', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let gql: Gql;
  let prisma: PrismaClient;
  let clusterId: string;
  let clusterUid: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const started = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
    app = started.app;
    gql = started.admin;
    prisma = createPrismaClient(db.url, { poolSize: 1 });
    // Bound at registration: the effective state composes a profile's setting and NodePool
    // with the cluster's overrides, as materializeEffectiveState does.
    const profile = await gql(
      `mutation($input: CreateProfileInput!) { createProfile(input: $input) { profile { name } } }`,
      {
        input: {
          name: 'prod-base',
          selector: 'env=prod',
          priority: 10,
          spec: { logLevel: 'error', nodePools: { base: nodePool('on-demand') } },
        },
      },
    );
    expect(profile.errors).toBeUndefined();
    const res = await gql<{ registerCluster: { cluster: { id: string; uid: string } } }>(REGISTER, {
      input: {
        name: 'prod-east',
        topology: 'STANDALONE',
        platform: 'AWS',
        region: 'us-east-1',
        labels: { env: 'prod' },
      },
    });
    expect(res.errors).toBeUndefined();
    ({ id: clusterId, uid: clusterUid } = res.data!.registerCluster.cluster);
  });

  afterAll(async () => {
    await prisma.$disconnect();
    await app.close();
    await db.drop();
  });

  async function mutate(
    mutation: keyof typeof MUTATIONS,
    variables: Record<string, unknown>,
  ): Promise<Counted> {
    return counting(async () => {
      const res = await gql(MUTATIONS[mutation], { id: clusterId, ...variables });
      expect(res.errors).toBeUndefined();
    });
  }

  /** The cluster's latest audit event and the snapshot clusterSnapshot takes of it now. */
  async function lastAudit(): Promise<{ before: unknown; after: unknown; action: string }> {
    const [row] = await prisma.$queryRaw<{ before: unknown; after: unknown; action: string }[]>`
      SELECT before, after, action FROM "AuditEvent" ORDER BY id DESC LIMIT 1`;
    return row!;
  }

  it('setKarpenter, upsertNodePool, deleteNodePool, setNodeClassOverrides: four statements each (setKarpenter 22 before issue 48), writing what the helpers wrote', async () => {
    // Warm: the first request of a process prepares what later ones reuse.
    await mutate('setKarpenter', { input: { logLevel: 'debug' } });
    // The profile's NodePool is in the effective state the changes below re-compose.
    expect((await effectiveStateOf(prisma, clusterUid)).sources['nodePools.base']).toEqual({
      kind: 'profile',
      profile: 'prod-base',
      revision: 1,
    });
    let generation = 2;
    const changes: [keyof typeof MUTATIONS, Record<string, unknown>][] = [
      ['setKarpenter', { input: { enabled: true, expectedGeneration: generation } }],
      ['setKarpenter', { input: { paused: true } }],
      [
        'setKarpenter',
        { input: { logLevel: 'info', featureGates: { SpotToSpotConsolidation: true } } },
      ],
      [
        'setKarpenter',
        { input: { interruptionQueue: 'fleet-interruptions', driftPolicy: 'REPORT' } },
      ],
      ['upsertNodePool', { input: { name: 'spot', spec: nodePool('spot') } }],
      ['upsertNodePool', { input: { name: 'base', spec: nodePool('spot') } }],
      ['deleteNodePool', { name: 'spot' }],
      ['setNodeClassOverrides', { input: { tags: { team: 'fleet' } } }],
    ];
    for (const [mutation, variables] of changes) {
      const before = await clusterSnapshot(prisma, clusterUid);
      const counted = await mutate(mutation, variables);
      generation++;
      // BEGIN, the scoped lock, one read, one write, the answer's read-back, COMMIT.
      expect(counted.sql.map((s) => s.trim().split(/\s+/)[0])).toEqual([
        'BEGIN',
        'SELECT',
        'SELECT',
        'WITH',
        'SELECT',
        'COMMIT',
      ]);
      // The reconcile job (BullMQ's add: two scripts today), the change event.
      expect(counted.redis.length).toBeLessThanOrEqual(3);
      // What the helpers it replaced wrote: the audit snapshots as clusterSnapshot takes them,
      // the effective state as materializeEffectiveState composes it, the reconcile run.
      const audit = await lastAudit();
      expect(audit.action).toBe(mutation);
      expect(audit.before).toEqual(before);
      expect(audit.after).toEqual(await clusterSnapshot(prisma, clusterUid));
      expect((audit.after as { generation: number }).generation).toBe(generation);
      const state = await effectiveStateOf(prisma, clusterUid);
      const stored = await prisma.desiredState.findUniqueOrThrow({
        where: { clusterId: clusterUid },
        select: { sources: true, ...Object.fromEntries(PROFILE_SETTINGS.map((k) => [k, true])) },
      });
      expect(stored).toEqual({ ...state.settings, sources: state.sources });
      const pools = await prisma.nodePool.findMany({
        where: { clusterId: clusterUid },
        select: { name: true, spec: true },
        orderBy: { name: 'asc' },
      });
      expect(pools).toEqual(state.nodePools);
      const runs = await prisma.$queryRaw<{ state: string }[]>`
        SELECT state::text FROM "ReconcileRun" WHERE "clusterId" = ${clusterUid}::uuid AND generation = ${generation}`;
      expect(runs).toEqual([{ state: 'QUEUED' }]);
    }
  });
});

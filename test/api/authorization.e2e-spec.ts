import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import pg from 'pg';
import {
  collect,
  createTestDatabase,
  subscriptionClient,
  testQueuePrefix,
  type TestDatabase,
} from '@fleet/testing';
import { operationFor, rootFields } from './schema-args.js';
import { startApi, type RunningApi } from './start-api.js';

type Role = 'VIEWER' | 'OPERATOR' | 'ADMIN';

/**
 * The access policy, written down once. A root field missing here fails the walk below: adding
 * a field means deciding who may call it.
 */
const POLICY: Record<string, Role> = {
  // queries
  cluster: 'VIEWER',
  clusters: 'VIEWER',
  node: 'VIEWER',
  fleetSummary: 'VIEWER',
  fleetHealthHistory: 'VIEWER',
  apiTokens: 'ADMIN',
  deadLetters: 'ADMIN',
  rollout: 'VIEWER',
  rollouts: 'VIEWER',
  changePlan: 'VIEWER',
  viewer: 'VIEWER',
  signOut: 'VIEWER',
  migrationPlan: 'VIEWER',
  profiles: 'VIEWER',
  profile: 'VIEWER',
  rolloutStrategies: 'VIEWER',
  rolloutStrategy: 'VIEWER',
  // mutations
  registerCluster: 'ADMIN',
  deregisterCluster: 'ADMIN',
  createApiToken: 'ADMIN',
  revokeApiToken: 'ADMIN',
  rotateClusterCredentials: 'ADMIN',
  redriveDeadLetter: 'ADMIN',
  redriveAllDeadLetters: 'ADMIN',
  updateClusterLabels: 'OPERATOR',
  setKarpenter: 'OPERATOR',
  upsertNodePool: 'OPERATOR',
  deleteNodePool: 'OPERATOR',
  setNodeClassOverrides: 'OPERATOR',
  applyMigrationPlan: 'OPERATOR',
  pauseCluster: 'OPERATOR',
  resumeCluster: 'OPERATOR',
  reconcileCluster: 'OPERATOR',
  startRollout: 'OPERATOR',
  pauseRollout: 'OPERATOR',
  resumeRollout: 'OPERATOR',
  abortRollout: 'OPERATOR',
  planChange: 'OPERATOR',
  applyPlan: 'OPERATOR',
  createProfile: 'OPERATOR',
  updateProfile: 'OPERATOR',
  deleteProfile: 'OPERATOR',
  resetClusterOverride: 'OPERATOR',
  resetClusterOverrides: 'OPERATOR',
  setClusterOverrides: 'OPERATOR',
  approveRolloutStage: 'OPERATOR',
  // Strategies are fleet-wide: OPERATOR to write (unscoped, as these tokens are), ADMIN to delete.
  createRolloutStrategy: 'OPERATOR',
  updateRolloutStrategy: 'OPERATOR',
  deleteRolloutStrategy: 'ADMIN',
  // subscriptions
  clusterChanged: 'VIEWER',
  fleetSummaryChanged: 'VIEWER',
  rolloutChanged: 'VIEWER',
};
const RANK: Record<Role, number> = { VIEWER: 1, OPERATOR: 2, ADMIN: 3 };
const DENIED = ['UNAUTHENTICATED', 'FORBIDDEN'];

describe('authentication and authorization', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let sql: pg.Client;
  const secrets = {} as Record<Role, string>;
  const ids: Record<string, string> = {};

  const register = async (name: string, labels: Record<string, string>) => {
    const res = await api.admin<{ registerCluster: { cluster: { id: string } } }>(
      `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } } }`,
      { input: { name, topology: 'STANDALONE', platform: 'AWS', region: 'us-east-1', labels } },
    );
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    ids[name] = res.data.registerCluster.cluster.id;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    for (const role of ['VIEWER', 'OPERATOR', 'ADMIN'] as const)
      secrets[role] = await api.createToken(role);
    await register('prod-a', { env: 'prod', team: 'core' });
    await register('prod-b', { env: 'prod', team: 'edge' });
    await register('staging-a', { env: 'staging', team: 'core' });
  });

  afterAll(async () => {
    await sql.end();
    await api.app.close();
    await db.drop();
  });

  it('walks every query and mutation: anonymous callers are refused, each role gets exactly its policy', async () => {
    const schema = api.app.get(GraphQLSchemaHost).schema;
    const { query, mutation } = rootFields(schema);
    const unlisted = [...query, ...mutation].map((f) => f.name).filter((name) => !(name in POLICY));
    expect(unlisted).toEqual([]);
    for (const [kind, fields] of [
      ['query', query],
      ['mutation', mutation],
    ] as const) {
      for (const field of fields) {
        const op = operationFor(kind, field);
        const anonymous = await api.as()(op.query, op.variables);
        expect({ field: field.name, code: anonymous.errors?.[0]?.extensions?.code }).toEqual({
          field: field.name,
          code: 'UNAUTHENTICATED',
        });
        for (const role of ['VIEWER', 'OPERATOR', 'ADMIN'] as const) {
          const res = await api.as(secrets[role])(op.query, op.variables);
          const code = res.errors?.[0]?.extensions?.code;
          const allowed = RANK[role] >= RANK[POLICY[field.name]!];
          expect({ field: field.name, role, denied: DENIED.includes(String(code)) }).toEqual({
            field: field.name,
            role,
            denied: !allowed,
          });
          if (!allowed) expect(code).toBe('FORBIDDEN');
        }
      }
    }
  });

  it('refuses subscriptions without a token', async () => {
    const { subscription } = rootFields(api.app.get(GraphQLSchemaHost).schema);
    expect(subscription.map((f) => f.name).filter((n) => !(n in POLICY))).toEqual([]);
    for (const field of subscription) {
      const op = operationFor('subscription', field);
      const client = subscriptionClient(api.url);
      await expect(collect(client, op.query, op.variables, () => true, 5000)).rejects.toMatchObject(
        {
          errors: [
            expect.objectContaining({
              extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }),
            }),
          ],
        },
      );
      await client.dispose();
    }
  });

  describe('a token scoped by label selector', () => {
    let scoped: string;
    beforeAll(async () => {
      scoped = await api.createToken('OPERATOR', { labelSelector: 'env=prod,team in (core)' });
    });

    it('sees only matching clusters, in lists, summaries and by ID', async () => {
      const gql = api.as(scoped);
      const list = await gql<{ clusters: { totalCount: number; nodes: { name: string }[] } }>(
        `{ clusters(first: 10) { totalCount nodes { name } } }`,
      );
      expect(list.data?.clusters).toEqual({ totalCount: 1, nodes: [{ name: 'prod-a' }] });
      const summary = await gql<{ fleetSummary: { clusters: number } }>(
        `{ fleetSummary { clusters } }`,
      );
      expect(summary.data?.fleetSummary.clusters).toBe(1);
      const other = await gql(`query($id: ID!) { cluster(id: $id) { name } }`, {
        id: ids['prod-b'],
      });
      expect(other.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const node = await gql(`query($id: ID!) { node(id: $id) { id } }`, { id: ids['staging-a'] });
      expect(node.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    });

    it('cannot change clusters outside its selector, nor move one out of it', async () => {
      const gql = api.as(scoped);
      const before = await sql.query(
        'SELECT "clusterId", generation FROM "DesiredState" ORDER BY 1',
      );
      const outside = await gql(
        `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { id } }`,
        { id: ids['prod-b'] },
      );
      expect(outside.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      const escape = await gql(
        `mutation($id: ID!) { updateClusterLabels(clusterId: $id, labels: { env: "dev" }) { id } }`,
        { id: ids['prod-a'] },
      );
      expect(escape.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(
        (await sql.query('SELECT "clusterId", generation FROM "DesiredState" ORDER BY 1')).rows,
      ).toEqual(before.rows);
      const inside = await gql<{ setKarpenter: { karpenter: { enabled: boolean } } }>(
        `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { karpenter { enabled } } }`,
        { id: ids['prod-a'] },
      );
      expect(inside.data?.setKarpenter.karpenter.enabled).toBe(true);
    });
  });

  it('refuses expired and revoked tokens', async () => {
    const expiring = await api.createToken('VIEWER', {
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await api.as(expiring)(`{ fleetSummary { clusters } }`)).errors).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1700));
    expect(
      (await api.as(expiring)(`{ fleetSummary { clusters } }`)).errors?.[0]?.extensions?.code,
    ).toBe('UNAUTHENTICATED');

    const revocable = await api.createToken('VIEWER', { name: 'to-revoke' });
    expect((await api.as(revocable)(`{ fleetSummary { clusters } }`)).errors).toBeUndefined();
    const tokens = await api.admin<{ apiTokens: { id: string; name: string }[] }>(
      `{ apiTokens { id name } }`,
    );
    const id = tokens.data!.apiTokens.find((t) => t.name === 'to-revoke')!.id;
    const revoked = await api.admin(
      `mutation($id: ID!) { revokeApiToken(id: $id) { revokedAt } }`,
      { id },
    );
    expect(revoked.errors).toBeUndefined();
    expect(
      (await api.as(revocable)(`{ fleetSummary { clusters } }`)).errors?.[0]?.extensions?.code,
    ).toBe('UNAUTHENTICATED');
  });

  it('stores only a hash of each token, and refuses a creation with bad input', async () => {
    const { rows } = await sql.query('SELECT "tokenHash" FROM "ApiToken"');
    for (const secret of Object.values(secrets)) {
      expect(rows.map((r: { tokenHash: string }) => r.tokenHash)).not.toContain(secret);
    }
    const bad = await api.admin(
      `mutation { createApiToken(input: { name: "x", role: VIEWER, labelSelector: "env in (" }) { secret } }`,
    );
    expect(bad.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.labelSelector',
    });
  });

  it('writes an audit event for every mutation, with the actor and the state before and after', async () => {
    const op = await api.createToken('OPERATOR', { name: 'audited-operator' });
    await api.as(op)(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: debug }) { id } }`,
      { id: ids['staging-a'] },
    );
    const res = await api.admin<{
      cluster: {
        auditEvents: {
          nodes: {
            actor: string;
            action: string;
            before: { logLevel: string };
            after: { logLevel: string; generation: number };
          }[];
        };
      };
    }>(
      `query($id: ID!) { cluster(id: $id) { auditEvents(first: 5) { nodes { actor action before after } } } }`,
      { id: ids['staging-a'] },
    );
    const [latest, registration] = res.data!.cluster.auditEvents.nodes;
    expect(latest).toMatchObject({
      actor: 'audited-operator',
      action: 'setKarpenter',
      before: { logLevel: 'info' },
      after: { logLevel: 'debug', generation: 2 },
    });
    expect(registration).toMatchObject({ action: 'registerCluster', before: null });
  });

  it('rejects abusive queries by depth and cost before they run', async () => {
    const deep = await api.admin(
      `{ clusters(first: 100) { edges { node { reconcileRuns(first: 100) { edges { node { generation } } } csrDecisions(first: 100) { nodes { csrName } } } } } }`,
    );
    expect(deep.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX' });
    const fine = await api.admin(
      `{ clusters(first: 10) { nodes { name reconcileRuns(first: 5) { nodes { generation } } } } }`,
    );
    expect(fine.errors).toBeUndefined();
  });

  it('rate-limits per token and says when to retry', async () => {
    const limited = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      RATE_LIMIT_PER_MINUTE: '3',
    });
    try {
      const secret = await limited.createToken('VIEWER');
      const codes: unknown[] = [];
      for (let i = 0; i < 5; i++)
        codes.push(
          (await limited.as(secret)(`{ fleetSummary { clusters } }`)).errors?.[0]?.extensions?.code,
        );
      expect(codes).toEqual([undefined, undefined, undefined, 'RATE_LIMITED', 'RATE_LIMITED']);
    } finally {
      await limited.app.close();
    }
  });
});

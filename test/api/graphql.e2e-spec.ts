import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { execFileSync } from 'node:child_process';
import { lexicographicSortSchema, printSchema } from 'graphql';
import pg from 'pg';
import {
  collect,
  createTestDatabase,
  subscriptionClient,
  testQueuePrefix,
  type TestDatabase,
} from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from './start-api.js';

interface Page {
  clusters: {
    totalCount: number;
    edges: { cursor: string; node: { name: string } }[];
    pageInfo: {
      hasNextPage: boolean;
      hasPreviousPage: boolean;
      endCursor: string | null;
      startCursor: string | null;
    };
  };
}
const PAGE = `query($first: Int, $after: String, $last: Int, $before: String, $filter: ClusterFilter, $orderBy: ClusterOrder) {
  clusters(first: $first, after: $after, last: $last, before: $before, filter: $filter, orderBy: $orderBy) {
    totalCount edges { cursor node { name } } pageInfo { hasNextPage hasPreviousPage endCursor startCursor } } }`;

describe('the GraphQL API', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  const prefix = testQueuePrefix();
  const ids = new Map<string, string>();

  const register = async (name: string, labels: Record<string, string>, platform = 'AWS') => {
    const res = await api.admin<{ registerCluster: { cluster: { id: string; uid: string } } }>(
      `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id uid } } }`,
      { input: { name, topology: 'STANDALONE', platform: 'AWS', region: 'us-east-1', labels } },
    );
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    ids.set(name, res.data.registerCluster.cluster.id);
    if (platform !== 'AWS') {
      // registerCluster refuses platforms without a driver; filters must still handle clusters
      // of every platform the schema knows, as registered before that check existed.
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.query(`UPDATE "Cluster" SET platform = $1::"Platform" WHERE id = $2`, [
        platform,
        res.data.registerCluster.cluster.uid,
      ]);
      await client.end();
    }
  };
  const deregister = (name: string) =>
    api.admin(`mutation($id: ID!) { deregisterCluster(clusterId: $id) { id } }`, {
      id: ids.get(name),
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      OPS_PORT: '0',
    });
    for (let i = 0; i < 30; i++) {
      const n = String(i).padStart(2, '0');
      await register(
        `c-${n}`,
        { env: i % 3 === 0 ? 'prod' : 'staging', region: i % 2 ? 'us-east-1' : 'eu-west-1' },
        i % 5 === 0 ? 'CAPI' : 'AWS',
      );
    }
  });

  afterAll(async () => {
    await worker.close();
    await api.app.close();
    await db.drop();
  });

  it('serves exactly the committed schema.gql (a change to the schema must be committed with it)', () => {
    const generated = printSchema(lexicographicSortSchema(api.app.get(GraphQLSchemaHost).schema));
    const committed = execFileSync('git', ['show', 'HEAD:apps/api/src/schema.gql'], {
      encoding: 'utf8',
    });
    const body = (text: string) => text.replace(/^#.*\n/gm, '').trim();
    expect(body(generated)).toEqual(body(committed));
  });

  it('pages forwards and backwards over every cluster exactly once', async () => {
    const forward: string[] = [];
    let after: string | null = null;
    let page: Page['clusters'];
    do {
      page = (await api.admin<Page>(PAGE, { first: 7, after })).data!.clusters;
      forward.push(...page.edges.map((e) => e.node.name));
      after = page.pageInfo.endCursor;
    } while (page.pageInfo.hasNextPage);
    expect(forward).toEqual([...ids.keys()].sort());
    expect(page.totalCount).toBe(30);

    const backward: string[] = [];
    let before: string | null = null;
    do {
      page = (await api.admin<Page>(PAGE, { last: 8, before })).data!.clusters;
      backward.unshift(...page.edges.map((e) => e.node.name));
      before = page.pageInfo.startCursor;
    } while (page.pageInfo.hasPreviousPage);
    expect(backward).toEqual(forward);
  });

  it('keeps pagination stable and complete while clusters are added and removed', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let step = 0;
    let page: Page['clusters'];
    do {
      page = (
        await api.admin<Page>(PAGE, {
          first: 5,
          after,
          orderBy: { field: 'NAME', direction: 'DESC' },
        })
      ).data!.clusters;
      seen.push(...page.edges.map((e) => e.node.name));
      after = page.pageInfo.endCursor;
      // Between pages: one cluster behind the cursor goes, one ahead of it and one behind arrive.
      if (step === 1) {
        await deregister('c-28');
        await register('c-00a', { env: 'prod' });
        await register('c-99', { env: 'prod' });
      }
      step++;
    } while (page.pageInfo.hasNextPage);
    // No duplicates, nothing skipped that existed throughout, the new one ahead is included.
    expect(new Set(seen).size).toBe(seen.length);
    const throughout = [...ids.keys()].filter((n) => !['c-28', 'c-00a', 'c-99'].includes(n));
    expect(throughout.every((n) => seen.includes(n))).toBe(true);
    expect(seen).toContain('c-00a');
    expect(seen).not.toContain('c-99');
    expect(seen).toEqual([...seen].sort().reverse());
  });

  it('filters by label selector, platform, enablement, sync and condition', async () => {
    const names = async (filter: Record<string, unknown>) =>
      (await api.admin<Page>(PAGE, { first: 100, filter })).data!.clusters.edges.map(
        (e) => e.node.name,
      );
    const prodUs = await names({ labelSelector: 'env=prod,region in (us-east-1)' });
    expect(prodUs).toEqual(['c-03', 'c-09', 'c-15', 'c-21', 'c-27']);
    expect(await names({ platform: 'CAPI', labelSelector: '!region' })).toEqual([]);
    expect(await names({ platform: 'CAPI', labelSelector: 'env notin (prod)' })).toEqual([
      'c-05',
      'c-10',
      'c-20',
      'c-25',
    ]);
    await api.admin(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { enabled: true }) { id } }`,
      { id: ids.get('c-03') },
    );
    expect(await names({ karpenterEnabled: true })).toEqual(['c-03']);
    expect((await names({ inSync: true })).length).toBe(0);
    expect(await names({ condition: { type: 'Available', status: 'True' } })).toEqual([]);
    const bad = await api.admin(PAGE, { first: 5, filter: { labelSelector: 'env in (prod' } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'filter.labelSelector',
    });
    const tooMany = await api.admin(PAGE, { first: 101 });
    expect(tooMany.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'first',
    });
  });

  it("pages a cluster's reconcile runs newest first", async () => {
    const runs = (after: string | null) =>
      api.admin<{
        cluster: {
          reconcileRuns: {
            totalCount: number;
            nodes: { generation: number; state: string }[];
            pageInfo: { hasNextPage: boolean; endCursor: string };
          };
        };
      }>(
        `query($id: ID!, $after: String) { cluster(id: $id) { reconcileRuns(first: 1, after: $after) {
           totalCount nodes { generation state } pageInfo { hasNextPage endCursor } } } }`,
        { id: ids.get('c-03'), after },
      );
    const first = (await runs(null)).data!.cluster.reconcileRuns;
    expect(first.totalCount).toBe(2);
    expect(first.nodes.map((r) => r.generation)).toEqual([2]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await runs(first.pageInfo.endCursor)).data!.cluster.reconcileRuns;
    expect(second.nodes.map((r) => r.generation)).toEqual([1]);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });

  it('resolves global IDs through node(id:)', async () => {
    const res = await api.admin<{ node: { __typename: string; name: string } }>(
      `query($id: ID!) { node(id: $id) { __typename ... on Cluster { name } } }`,
      { id: ids.get('c-04') },
    );
    expect(res.data?.node).toEqual({ __typename: 'Cluster', name: 'c-04' });
  });

  it('pushes clusterChanged (filtered) and fleetSummaryChanged over graphql-ws', async () => {
    const viewer = await api.createToken('VIEWER');
    const client = subscriptionClient(api.url, viewer);
    const changed = collect<{ clusterChanged: { name: string; karpenter: { logLevel: string } } }>(
      client,
      `subscription { clusterChanged(filter: { labelSelector: "env=prod" }) { name karpenter { logLevel } } }`,
      {},
      (events) => events.some((e) => e.clusterChanged.karpenter.logLevel === 'debug'),
    );
    const summary = collect<{
      fleetSummaryChanged: { clusters: number; karpenterEnabled: number };
    }>(client, `subscription { fleetSummaryChanged { clusters karpenterEnabled } }`, {}, (events) =>
      events.some((e) => e.fleetSummaryChanged.karpenterEnabled === 2),
    );
    await new Promise((r) => setTimeout(r, 300));
    // A staging cluster's change must not reach a prod-filtered subscriber.
    await api.admin(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: debug }) { id } }`,
      { id: ids.get('c-01') },
    );
    await api.admin(
      `mutation($id: ID!) { setKarpenter(clusterId: $id, input: { logLevel: debug, enabled: true }) { id } }`,
      { id: ids.get('c-06') },
    );
    const events = await changed;
    expect(events.map((e) => e.clusterChanged.name)).not.toContain('c-01');
    expect(events.at(-1)?.clusterChanged).toEqual({
      name: 'c-06',
      karpenter: { logLevel: 'debug' },
    });
    expect((await summary).at(-1)?.fleetSummaryChanged.karpenterEnabled).toBe(2);
    await client.dispose();
  });

  it('exposes health and Prometheus metrics on the API and the worker', async () => {
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${api.url}/readyz`)).json()).toEqual({ status: 'ok' });
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metrics).toMatch(
      /fleet_graphql_request_duration_seconds_count\{[^}]*type="query"[^}]*\} [1-9]/,
    );
    expect(metrics).toMatch(/fleet_queue_depth\{[^}]*queue="reconcile"/);
    expect(worker.opsUrl).toBeDefined();
    expect(await (await fetch(`${worker.opsUrl}/readyz`)).json()).toEqual({ status: 'ok' });
    const workerMetrics = await (await fetch(`${worker.opsUrl}/metrics`)).text();
    expect(workerMetrics).toMatch(/fleet_dispatch_duration_seconds_count\{[^}]*\} [1-9]/);
  });
});

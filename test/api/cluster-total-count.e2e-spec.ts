import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import { foldFleetSummary } from '../../apps/worker/src/maintenance/fleet-summary.js';
import { startApi, type Gql, type RunningApi } from './start-api.js';

/**
 * Issue 48, target 4: `clusters { totalCount }` costs no scan of the fleet. Exact from the
 * maintained counts (no filter, or one maintained dimension alone, unscoped), exact when the first
 * page holds every match, otherwise counted up to TOTAL_COUNT_LIMIT (5 here) and flagged inexact
 * past it. Each answer is checked against the clusters a full walk of the pages finds.
 */
const LIMIT = 5;

interface Page {
  clusters: {
    totalCount: number;
    totalCountIsExact: boolean;
    nodes: { name: string }[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}
const PAGE = `query($first: Int, $after: String, $filter: ClusterFilter) {
  clusters(first: $first, after: $after, filter: $filter) {
    totalCount totalCountIsExact nodes { name } pageInfo { hasNextPage endCursor } } }`;

describe('clusters totalCount, maintained or bounded', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let sql: pg.Client;

  /** Every match, by walking the pages: what totalCount must equal when it says it is exact. */
  const matches = async (gql: Gql, filter: Record<string, unknown>) => {
    const names: string[] = [];
    let after: string | null = null;
    for (;;) {
      const res: { data?: Page } = await gql<Page>(PAGE, { first: 2, after, filter });
      names.push(...res.data!.clusters.nodes.map((n) => n.name));
      if (!res.data!.clusters.pageInfo.hasNextPage) return names.length;
      after = res.data!.clusters.pageInfo.endCursor;
    }
  };
  /** The total a page of 2 (not the whole list) reports, and whether it says it is exact. */
  const total = async (gql: Gql, filter: Record<string, unknown>) => {
    const res = await gql<Page>(PAGE, { first: 2, filter });
    if (!res.data) throw new Error(JSON.stringify(res.errors));
    return [res.data.clusters.totalCount, res.data.clusters.totalCountIsExact] as const;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      TOTAL_COUNT_LIMIT: String(LIMIT),
    });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    // 12 clusters: 8 prod, 4 staging; 3 of them on CAPI; Karpenter enabled on 8.
    for (let i = 0; i < 12; i++) {
      const res = await api.admin<{ registerCluster: { cluster: { id: string } } }>(
        `mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } } }`,
        {
          input: {
            name: `t-${String(i).padStart(2, '0')}`,
            topology: 'STANDALONE',
            platform: 'AWS',
            region: 'us-east-1',
            labels: { env: i < 8 ? 'prod' : 'staging' },
          },
        },
      );
      if (!res.data) throw new Error(JSON.stringify(res.errors));
    }
    // registerCluster takes only platforms with a driver; the counts follow any platform.
    await sql.query(
      `UPDATE "Cluster" SET platform = 'CAPI' WHERE name IN ('t-00', 't-05', 't-09')`,
    );
    await sql.query(
      `UPDATE "DesiredState" d SET enabled = true FROM "Cluster" c WHERE c.id = d."clusterId" AND c.name < 't-08'`,
    );
  });

  afterAll(async () => {
    await sql?.end();
    await api?.app.close();
    await db?.drop();
  });

  it('is exact past the limit where a maintained count is the total, before and after the fold', async () => {
    const maintained: [Record<string, unknown>, number][] = [
      [{}, 12],
      [{ platform: 'CAPI' }, 3],
      [{ platform: 'AWS', labelSelector: '' }, 9],
      [{ karpenterEnabled: true }, 8],
      [{ topology: 'STANDALONE' }, 12],
    ];
    for (const fold of [false, true]) {
      if (fold) {
        const pool = new pg.Pool({ connectionString: db.url, max: 1 });
        await foldFleetSummary(pool);
        await pool.end();
      }
      for (const [filter, expected] of maintained) {
        expect([filter, await total(api.admin, filter)]).toEqual([filter, [expected, true]]);
        expect(await matches(api.admin, filter)).toBe(expected);
      }
    }
  });

  it('counts up to the limit, and past it answers the limit flagged inexact', async () => {
    // 8 prod clusters: counted, more than 5.
    expect(await total(api.admin, { labelSelector: 'env=prod' })).toEqual([LIMIT, false]);
    expect(await matches(api.admin, { labelSelector: 'env=prod' })).toBe(8);
    // 4 staging clusters: counted, exact.
    expect(await total(api.admin, { labelSelector: 'env=staging' })).toEqual([4, true]);
    // Two maintained dimensions together are counted: 6 enabled AWS clusters.
    expect(await total(api.admin, { platform: 'AWS', karpenterEnabled: true })).toEqual([
      LIMIT,
      false,
    ]);
    expect(await matches(api.admin, { platform: 'AWS', karpenterEnabled: true })).toBe(6);
    // Disabled is not a maintained count of its own: 4 clusters, counted.
    expect(await total(api.admin, { karpenterEnabled: false })).toEqual([4, true]);
  });

  it('is exact when the first page holds every match', async () => {
    const res = await api.admin<Page>(PAGE, { first: 10, filter: { labelSelector: 'env=prod' } });
    expect(res.data?.clusters).toMatchObject({ totalCount: 8, totalCountIsExact: true });
  });

  it("counts a scoped token's list: the maintained counts are the whole fleet's", async () => {
    const prod = api.as(await api.createToken('VIEWER', { labelSelector: 'env=prod' }));
    expect(await total(prod, {})).toEqual([LIMIT, false]);
    expect(await matches(prod, {})).toBe(8);
    expect(await total(prod, { platform: 'CAPI' })).toEqual([2, true]);
  });

  it('answers every GraphQL request no-store, with Apollo cache control off', async () => {
    for (const query of ['{ clusters(first: 1) { totalCount } }', '{ nope }']) {
      const res = await fetch(`${api.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${api.adminToken}` },
        body: JSON.stringify({ query }),
      });
      expect([query, res.headers.get('cache-control')]).toEqual([query, 'no-store']);
    }
  });

  it('follows a deregistration in the maintained count at once', async () => {
    const { rows } = await sql.query<{ id: string }>(
      `SELECT id FROM "Cluster" WHERE name = 't-11'`,
    );
    const res = await api.admin(`mutation($id: ID!) { deregisterCluster(clusterId: $id) { id } }`, {
      id: rows[0]!.id,
    });
    expect(res.errors).toBeUndefined();
    expect(await total(api.admin, {})).toEqual([11, true]);
    expect(await matches(api.admin, {})).toBe(11);
  });
});

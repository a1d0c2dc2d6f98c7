import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import pg from 'pg';
import { registerClusters, type RegisteredCluster } from '../faults/fleet-fixture.js';
import { startApi, type RunningApi } from './start-api.js';

const HOUR = 3_600_000;

/**
 * The history the console's charts draw (issue 47): the fleet by health state per hour, with
 * hours no roll-up covers as gaps (nulls, never zeros), and a cluster's CSR decisions over time by
 * decision and reason. Rows are written as the worker's roll-up and the ingest write them.
 */
describe('fleet health history and CSR decision history', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let pool: pg.Pool;
  let clusters: RegisteredCluster[];
  const thisHour = Math.floor(Date.now() / HOUR) * HOUR;
  const hour = (back: number) => new Date(thisHour - back * HOUR);

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    clusters = await registerClusters(api, 3, 'history');
    // Registered a day ago, so each hour below counts all three.
    await pool.query(`UPDATE "Cluster" SET "createdAt" = now() - interval '1 day'`);
    // Registered now: not stale in the hours before it existed.
    await registerClusters(api, 1, 'history-late');
    const rollup = (c: RegisteredCluster, back: number, degraded: number, progressing: number) =>
      pool.query(
        `INSERT INTO "HealthRollup" ("clusterId", bucket, samples, "availableSamples", "degradedSamples", "progressingSamples", "nodesAvg", "nodesMax", "vcpusAvg")
         VALUES ($1, $2, 120, 120, $3, $4, 3, 3, 12)`,
        [c.uid, hour(back), degraded, progressing],
      );
    const [a, b] = clusters as [RegisteredCluster, RegisteredCluster];
    // 5 hours back: a healthy, b degraded for part of the hour, the third silent (stale).
    await rollup(a, 5, 0, 0);
    await rollup(b, 5, 10, 30);
    // 4 hours back: a progressing, b healthy. 3 and 2 hours back: nothing at all (a gap).
    await rollup(a, 4, 0, 5);
    await rollup(b, 4, 0, 0);
    // 1 hour back: both healthy.
    await rollup(a, 1, 0, 0);
    await rollup(b, 1, 0, 0);
    const decide = (decision: string, reason: string, minutesBack: number, n: number) =>
      pool.query(
        `INSERT INTO "CsrDecision" ("clusterId", "csrName", "nodeName", "signerName", decision, reason, message, "decidedAt")
         SELECT $1, 'csr-' || $2 || '-' || g, 'ip-10-0-1-' || g, 'kubernetes.io/kube-apiserver-client-kubelet', $2, $3, 'm',
                now() - make_interval(mins => $4) - make_interval(secs => g)
           FROM generate_series(1, $5) g`,
        [a.uid, decision, reason, minutesBack, n],
      );
    await decide('Approved', 'KarpenterNodeClaim', 90, 3);
    await decide('Denied', 'NoMatchingNodeClaim', 90, 2);
    await decide('Approved', 'KarpenterNodeClaim', 10, 1);
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await api?.app.close();
    await db?.drop();
  });

  it('counts each cluster in one state per hour and leaves uncovered hours as gaps', async () => {
    const res = await api.admin<{
      fleetHealthHistory: {
        at: string;
        healthy: number | null;
        progressing: number | null;
        degraded: number | null;
        stale: number | null;
      }[];
    }>(
      `query($from: DateTime!, $to: DateTime!) { fleetHealthHistory(from: $from, to: $to) { at healthy progressing degraded stale } }`,
      { from: hour(5).toISOString(), to: new Date(thisHour + HOUR).toISOString() },
    );
    expect(res.errors).toBeUndefined();
    const gap = { healthy: null, progressing: null, degraded: null, stale: null };
    expect(res.data!.fleetHealthHistory).toEqual([
      { at: hour(5).toISOString(), healthy: 1, progressing: 0, degraded: 1, stale: 1 },
      { at: hour(4).toISOString(), healthy: 1, progressing: 1, degraded: 0, stale: 1 },
      { at: hour(3).toISOString(), ...gap },
      { at: hour(2).toISOString(), ...gap },
      { at: hour(1).toISOString(), healthy: 2, progressing: 0, degraded: 0, stale: 1 },
      // The current hour is not rolled up yet: a gap, not a fleet of zeros.
      { at: hour(0).toISOString(), ...gap },
    ]);
    const tooLong = await api.admin(
      `query($from: DateTime!, $to: DateTime!) { fleetHealthHistory(from: $from, to: $to) { at } }`,
      { from: hour(24 * 40).toISOString(), to: hour(0).toISOString() },
    );
    expect(tooLong.errors?.[0]?.message).toMatch(/from.*31 days/);
  });

  it("counts a cluster's CSR decisions per step by decision and reason", async () => {
    const to = new Date();
    const from = new Date(to.getTime() - 2 * HOUR);
    const res = await api.admin<{
      cluster: {
        csrDecisionHistory: { at: string; decision: string; reason: string; count: number }[];
      };
    }>(
      `query($id: ID!, $from: DateTime!, $to: DateTime!) { cluster(id: $id) {
         csrDecisionHistory(from: $from, to: $to, step: 3600) { at decision reason count } } }`,
      { id: clusters[0]!.id, from: from.toISOString(), to: to.toISOString() },
    );
    expect(res.errors).toBeUndefined();
    const rows = res.data!.cluster.csrDecisionHistory;
    expect(rows.map(({ decision, reason, count }) => ({ decision, reason, count }))).toEqual([
      { decision: 'Approved', reason: 'KarpenterNodeClaim', count: 3 },
      { decision: 'Denied', reason: 'NoMatchingNodeClaim', count: 2 },
      { decision: 'Approved', reason: 'KarpenterNodeClaim', count: 1 },
    ]);
    expect(rows[0]!.at).toBe(from.toISOString());
    expect(rows[2]!.at).toBe(new Date(from.getTime() + HOUR).toISOString());
  });
});

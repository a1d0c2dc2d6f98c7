import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '@fleet/testing';
import pg from 'pg';
import type { Principal } from '../../apps/api/src/auth/principal.js';
import { FleetSummaryService } from '../../apps/api/src/fleet/fleet-summary.service.js';
import { foldFleetSummary } from '../../apps/worker/src/maintenance/fleet-summary.js';
import {
  condition,
  registerClusters,
  setEnabled,
  type RegisteredCluster,
} from '../faults/fleet-fixture.js';
import { startApi, type RunningApi } from './start-api.js';

const SUMMARY = `{ fleetSummary { clusters inSync stale karpenterEnabled clusterAutoscalerDisabled paused
  byHealth { healthy progressing degraded stale paused }
  byPlatform { value count } byTopology { value count } byHostedMode { value count }
  bySidecarVersion { value count } byCondition { type status reason count } } }`;

/**
 * fleetSummary reads counts maintained by triggers and the worker's fold (issue 19: 100,000
 * clusters); after every kind of change, folded or not yet, it must equal the count from scratch
 * (the scan a scoped caller still gets).
 */
describe('fleetSummary from maintained counts', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let pool: pg.Pool;
  let clusters: RegisteredCluster[];
  const unscoped: Principal = {
    tokenId: 'test',
    name: 'test',
    role: 'ADMIN',
    scope: null,
    labelSelector: null,
    expiresAt: null,
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: testQueuePrefix() });
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    clusters = await registerClusters(api, 5, 'summary');
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await api?.app.close();
    await db?.drop();
  });

  /** The maintained summary (through GraphQL) and the scan agree; returns the summary. */
  const agrees = async () => {
    const res = await api.admin<{ fleetSummary: unknown }>(SUMMARY);
    expect(res.errors).toBeUndefined();
    const fromScratch = await api.app.get(FleetSummaryService).scan(unscoped);
    expect(res.data?.fleetSummary).toEqual(fromScratch);
    return fromScratch;
  };
  /** Both before the worker folds the changes in (the API corrects for them) and after. */
  const agreesFoldedOrNot = async () => {
    await agrees();
    await foldFleetSummary(pool);
    const marks = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "FleetSummaryDirty"`,
    );
    expect(marks.rows[0]!.n).toBe(0);
    return agrees();
  };

  it('counts registrations, mutations, status changes and deregistrations exactly', async () => {
    const registered = await agreesFoldedOrNot();
    expect(registered).toMatchObject({
      clusters: 5,
      inSync: 0,
      byPlatform: [{ value: 'AWS', count: 5 }],
    });

    // Mutations: Karpenter enabled (a new generation: out of sync), a cluster paused.
    const [a, b, c, d] = clusters as [
      RegisteredCluster,
      RegisteredCluster,
      RegisteredCluster,
      RegisteredCluster,
    ];
    const generation = await setEnabled(api, a, true);
    await setEnabled(api, b, true);
    const paused = await api.admin(`mutation($id: ID!) { pauseCluster(clusterId: $id) { id } }`, {
      id: c.id,
    });
    expect(paused.errors).toBeUndefined();
    const mutated = await agrees();
    expect(mutated).toMatchObject({ karpenterEnabled: 2, paused: 1 });

    // Status as the ingest writes it: a generation applied, conditions, a sidecar version; one
    // update that changes only lastReportAt (a heartbeat) marks nothing.
    const at = new Date().toISOString();
    await pool.query(
      `UPDATE "ClusterStatus" SET "observedGeneration" = $2, conditions = $3::jsonb, "sidecarVersion" = '0.3.0',
              "lastReportAt" = now() WHERE "clusterId" = $1`,
      [
        a.uid,
        generation,
        JSON.stringify([
          condition('Available', 'True', 'AsExpected', at),
          condition('Degraded', 'True', 'Broken', at),
        ]),
      ],
    );
    await pool.query(
      `UPDATE "ClusterStatus" SET conditions = $2::jsonb, "lastReportAt" = now() - interval '1 hour' WHERE "clusterId" = $1`,
      [d.uid, JSON.stringify([condition('HostedMode', 'True', 'Converged', at)])],
    );
    const reported = await agreesFoldedOrNot();
    expect(reported.inSync).toBeGreaterThanOrEqual(1);
    expect(reported.byHostedMode).toEqual([{ value: 'Converged', count: 1 }]);
    expect(reported.stale).toBe(4);
    // One health state per cluster (issue 47): the degraded cluster is in sync too, yet counted
    // once; the paused one is not also stale; the states add up to the clusters.
    expect(reported.byHealth).toEqual({
      healthy: 0,
      progressing: 0,
      degraded: 1,
      stale: 3,
      paused: 1,
    });
    const states = await api.admin<{
      clusters: {
        nodes: { uid: string; healthState: string; inSync: boolean; generationSync: string }[];
      };
    }>(`{ clusters(first: 10) { nodes { uid healthState inSync generationSync } } }`);
    expect(states.errors).toBeUndefined();
    const stateOf = (uid: string) => states.data!.clusters.nodes.find((n) => n.uid === uid);
    expect(stateOf(a.uid)).toMatchObject({
      healthState: 'DEGRADED',
      inSync: true,
      generationSync: `applied generation ${generation} of ${generation}`,
    });
    expect(stateOf(c.uid)?.healthState).toBe('PAUSED');
    expect(stateOf(d.uid)?.healthState).toBe('STALE');
    await pool.query(`UPDATE "ClusterStatus" SET "lastReportAt" = now() WHERE "clusterId" = $1`, [
      b.uid,
    ]);
    const marks = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "FleetSummaryDirty"`,
    );
    expect(marks.rows[0]!.n).toBe(0);
    // Stale moves with the clock and liveness, never with a mark.
    expect((await agrees()).stale).toBe(3);

    // The same message again with other times: the keys are the same, nothing marked.
    await pool.query(`UPDATE "ClusterStatus" SET conditions = $2::jsonb WHERE "clusterId" = $1`, [
      d.uid,
      JSON.stringify([condition('HostedMode', 'True', 'Converged', new Date(0).toISOString())]),
    ]);
    expect(
      (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "FleetSummaryDirty"`))
        .rows[0]!.n,
    ).toBe(0);

    // A platform changed by hand, a new registration, and a deregistration, folded together.
    await pool.query(`UPDATE "Cluster" SET platform = 'AZURE' WHERE id = $1`, [b.uid]);
    const [e] = await registerClusters(api, 1, 'summary-late');
    const gone = await api.admin(
      `mutation($id: ID!) { deregisterCluster(clusterId: $id) { id } }`,
      { id: c.id },
    );
    expect(gone.errors).toBeUndefined();
    const changed = await agreesFoldedOrNot();
    expect(changed).toMatchObject({
      clusters: 5,
      paused: 0,
      byPlatform: [
        { value: 'AWS', count: 4 },
        { value: 'AZURE', count: 1 },
      ],
    });
    expect(e).toBeDefined();
    // The deregistered cluster is no longer counted under any key.
    const keys = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "ClusterSummaryKeys" WHERE "clusterId" = $1`,
      [c.uid],
    );
    expect(keys.rows[0]!.n).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CRDS_DIR,
  createTestDatabase,
  eventually,
  startSidecarProcessWith,
  testQueuePrefix,
  type RunningProcess,
  type TestDatabase,
  startPrivateRedis,
  type PrivateRedis,
} from '@fleet/testing';
import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { query, registerClusters, setEnabled, type RegisteredCluster } from './fleet-fixture.js';

// This suite flushes Redis: it runs its own redis-server, never the shared one.
let redis: PrivateRedis;
let REDIS_URL: string;

/**
 * A real sidecar process dies (SIGKILL): with no heartbeat its cluster becomes Stale; a change
 * made meanwhile waits; when the sidecar comes back its cluster recovers (Stale=False,
 * ReportsResumed) and catches up to the latest generation. Every transition is recorded.
 */
describe('sidecar killed with SIGKILL', () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: Awaited<ReturnType<typeof startWorker>>;
  let kube: EmulatedCluster;
  let prefix: string;
  let cluster: RegisteredCluster;
  let sidecar: RunningProcess | undefined;

  const startSidecar = () =>
    startSidecarProcessWith(
      {
        ...kube.sidecarEnv,
        CLUSTER_ID: cluster.uid,
        REPORT_TOKEN: cluster.reportToken,
        API_URL: api.url,
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        CRD_DIR: CRDS_DIR,
        HEARTBEAT_SECONDS: '1',
        LOG_LEVEL: 'warn',
      },
      'sidecar',
    );

  const STATUS = `query($id: ID!) { cluster(id: $id) { inSync karpenter { generation }
    status { observedGeneration conditions { type status reason message } } } }`;
  type Status = {
    cluster: {
      inSync: boolean;
      karpenter: { generation: number };
      status: {
        observedGeneration: number;
        conditions: { type: string; status: string; reason: string }[];
      };
    };
  };
  const staleOf = async () => {
    const res = await api.admin<Status>(STATUS, { id: cluster.id });
    return {
      cluster: res.data?.cluster,
      stale: res.data?.cluster.status.conditions.find((c) => c.type === 'Stale'),
    };
  };

  beforeAll(async () => {
    redis = await startPrivateRedis();
    REDIS_URL = redis.url;
    db = await createTestDatabase();
    prefix = testQueuePrefix();
    const env = { DATABASE_URL: db.url, REDIS_URL, QUEUE_PREFIX: prefix };
    api = await startApi({ ...env, RATE_LIMIT_PER_MINUTE: '1000000' });
    worker = await startWorker({
      ...env,
      LOG_LEVEL: 'warn',
      HEARTBEAT_SECONDS: '1',
      STALE_AFTER_HEARTBEATS: '3',
      SWEEP_EVERY_SECONDS: '0.5',
    });
    kube = await startEmulatedCluster();
    [cluster] = (await registerClusters(api, 1, 'sidecar-crash')) as [RegisteredCluster];
  });

  afterAll(async () => {
    await sidecar?.stop('SIGKILL');
    await worker?.close();
    await api?.app.close();
    await kube?.stop();
    await db?.drop();
    await redis?.stop();
  });

  it('goes Stale while its sidecar is dead, then recovers and catches up', async () => {
    sidecar = startSidecar();
    const fail = (err: Error) => {
      throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`);
    };
    await eventually(async () => ((await staleOf()).cluster?.inSync ? true : undefined), {
      timeoutMs: 25_000,
      what: 'first report',
    }).catch(fail);

    sidecar.child.kill('SIGKILL');
    await sidecar.stop();
    const stale = await eventually(
      async () => {
        const { stale } = await staleOf();
        return stale?.status === 'True' ? stale : undefined;
      },
      { timeoutMs: 10_000, what: 'Stale=True' },
    );
    expect(stale.reason).toBe('NoRecentReports');

    // A change while the sidecar is away waits on its queue (and shows: not in sync).
    const generation = await setEnabled(api, cluster, true);
    expect((await staleOf()).cluster?.inSync).toBe(false);

    sidecar = startSidecar();
    const recovered = await eventually(
      async () => {
        const { cluster: c, stale } = await staleOf();
        return c?.status.observedGeneration === generation && stale?.status === 'False'
          ? stale
          : undefined;
      },
      { timeoutMs: 25_000, what: `generation ${generation} applied and Stale=False` },
    ).catch(fail);
    expect(recovered.reason).toBe('ReportsResumed');

    const transitions = await query<{
      fromStatus: string | null;
      toStatus: string;
      toReason: string;
    }>(
      db.url,
      `SELECT "fromStatus", "toStatus", "toReason" FROM "ConditionTransition" WHERE "clusterId" = $1 AND type = 'Stale' ORDER BY at, id`,
      [cluster.uid],
    );
    // The first two are the crash and the recovery; on a loaded machine a slow ingest may flap
    // once more, but every flap is recorded and the last word is "not stale".
    expect(transitions.at(-1)).toMatchObject({ toStatus: 'False', toReason: 'ReportsResumed' });
    expect(transitions.slice(0, 2)).toEqual([
      { fromStatus: null, toStatus: 'True', toReason: 'NoRecentReports' },
      { fromStatus: 'True', toStatus: 'False', toReason: 'ReportsResumed' },
    ]);
  });
});

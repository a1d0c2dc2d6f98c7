import { startWorker } from '../../apps/worker/src/main.js';
import { startApi, type RunningApi } from '../api/start-api.js';
import {
  startRealHostedCluster,
  type RealHostedCluster,
} from '../support/control-plane/hosted-clusters.js';
import { SimulatedKubelets } from '../support/control-plane/kubelets.js';
import type { Condition } from '../support/control-plane/scenario.js';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '../support/database.js';
import { registerCluster, startSidecarProcess } from '../support/fleet-sidecar.js';
import { HOSTED, type HostedSidecarMode } from '../support/hcp-aws-hosted.js';
import { eventually, type RunningProcess } from '../support/processes.js';

const STATUS = `query($id: ID!) { cluster(id: $id) { status { observedGeneration
  conditions { type status reason message } } } }`;
const SET = `mutation($id: ID!, $input: SetKarpenterInput!) {
  setKarpenter(clusterId: $id, input: $input) { karpenter { generation } } }`;
const UPSERT = `mutation($id: ID!, $input: UpsertNodePoolInput!) {
  upsertNodePool(clusterId: $id, input: $input) { karpenter { generation } } }`;

/** The IAM role the hosted cluster's Karpenter assumes. */
export const ROLE = 'arn:aws:iam::111122223333:role/alpha-k7m2x-karpenter';

/** The fleet (API, worker) with the fixture's hosted cluster on real servers, registered, its sidecar running. */
export interface HostedFleet {
  api: RunningApi;
  cluster: RealHostedCluster;
  id: string;
  /** setKarpenter; the new generation */
  setKarpenter(input: Record<string, unknown>): Promise<number>;
  /** upsertNodePool `general` on the fleet's OpenshiftEC2NodeClass */
  upsertGeneralNodePool(): Promise<void>;
  /** The cluster's reported conditions once they are at `generation` and `ready` holds. */
  status(
    generation: number,
    ready: (c: Condition[]) => boolean,
    what: string,
  ): Promise<Condition[]>;
  stop(): Promise<void>;
}

export const hasCondition = (cs: Condition[], type: string, status: string, reason?: string) =>
  cs.some((c) => c.type === type && c.status === status && (!reason || c.reason === reason));

/**
 * The fleet, the hosted cluster (management and guest control planes, the management cluster's
 * kubelets simulated so its Deployments run) and a sidecar process for it in `mode`; `beforeSidecar`
 * runs once the cluster is up (HyperShift's stand-in, say).
 */
export async function startHostedFleet(
  mode: HostedSidecarMode,
  beforeSidecar: (cluster: RealHostedCluster) => void = () => undefined,
): Promise<HostedFleet> {
  const prefix = testQueuePrefix();
  let db: TestDatabase | undefined;
  let api: RunningApi | undefined;
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  let cluster: RealHostedCluster | undefined;
  let kubelets: SimulatedKubelets | undefined;
  let sidecar: RunningProcess | undefined;
  const stop = async () => {
    await sidecar?.stop();
    kubelets?.stop();
    await worker?.close();
    await api?.app.close();
    await cluster?.stop();
    await db?.drop();
  };
  try {
    db = await createTestDatabase();
    api = await startApi({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix });
    worker = await startWorker({ DATABASE_URL: db.url, QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' });
    cluster = await startRealHostedCluster(mode);
    kubelets = new SimulatedKubelets(cluster.management);
    await kubelets.register('management-worker-0', 'worker');
    kubelets.start();
    beforeSidecar(cluster);
    const registered = await registerCluster(api.admin, {
      name: 'alpha',
      topology: 'HOSTED',
      platform: 'AWS',
      region: HOSTED.region,
      infraID: HOSTED.infraID,
      managementCluster: 'mgmt-1',
      hcpNamespace: HOSTED.hcpNamespace,
    });
    sidecar = startSidecarProcess(cluster, registered, { apiUrl: api.url, queuePrefix: prefix });
    const fleetApi = api;
    const id = registered.id;
    return {
      api: fleetApi,
      cluster,
      id,
      async setKarpenter(input) {
        const res = await fleetApi.admin<{ setKarpenter: { karpenter: { generation: number } } }>(
          SET,
          { id, input },
        );
        if (!res.data) throw new Error(`setKarpenter: ${JSON.stringify(res.errors)}`);
        return res.data.setKarpenter.karpenter.generation;
      },
      async upsertGeneralNodePool() {
        const res = await fleetApi.admin(UPSERT, {
          id,
          input: {
            name: 'general',
            spec: {
              template: {
                spec: {
                  requirements: [],
                  expireAfter: '720h',
                  nodeClassRef: {
                    group: 'karpenter.k8s.aws',
                    kind: 'EC2NodeClass',
                    name: 'karpenter-fleet',
                  },
                },
              },
            },
          },
        });
        if (res.errors) throw new Error(`upsertNodePool: ${JSON.stringify(res.errors)}`);
      },
      status: (generation, ready, what) =>
        eventually(
          async () => {
            const res = await fleetApi.admin<{
              cluster: { status: { observedGeneration: number; conditions: Condition[] } | null };
            }>(STATUS, { id });
            const s = res.data?.cluster.status;
            return s && s.observedGeneration >= generation && ready(s.conditions)
              ? s.conditions
              : undefined;
          },
          { timeoutMs: 60_000, what },
        ).catch((err: Error) => {
          throw new Error(`${err.message}\n${sidecar?.output() ?? ''}`, { cause: err });
        }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

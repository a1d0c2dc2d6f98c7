import {
  CONTRACT_VERSION,
  type KarpenterDesiredState,
  type ReconcileOrder,
} from '@fleet/contracts';
import {
  CLUSTER_API_NODE_CLASS,
  findDriver,
  loadCustomResourceDefinitions,
} from '@fleet/cloud-provider';
import { KubeClusterObjectReader } from '@fleet/discovery';
import { pino } from 'pino';
import { apiServersFor } from '../../apps/sidecar/src/kube/api-servers.js';
import { SidecarRuntime } from '../../apps/sidecar/src/runtime.js';
import {
  CAPI_CLUSTER,
  OPENSHIFT_CLUSTER_API,
  startEmulatedCapiCluster,
  startEmulatedOpenShiftClusterApi,
  type EmulatedCapiCluster,
} from '../support/capi-aws-workload.js';
import { CRDS_DIR } from '../support/fixtures.js';
import { eventually } from '../support/processes.js';

export const CLUSTER_ID = '00000000-0000-4000-8000-00000000ca91';

export interface CapiHarness {
  pair: EmulatedCapiCluster;
  runtime: SidecarRuntime;
  order(spec?: Partial<KarpenterDesiredState>): ReconcileOrder;
  stop(): Promise<void>;
}

export const DEFAULT_SPEC: KarpenterDesiredState = {
  enabled: false,
  paused: false,
  clusterAutoscalerMode: 'KEEP',
  logLevel: 'info',
  featureGates: { Drift: true },
  nodePools: [],
  nodeClassOverrides: {},
};

export const GENERAL_NODEPOOL = {
  name: 'general',
  spec: {
    template: {
      spec: {
        nodeClassRef: {
          group: CLUSTER_API_NODE_CLASS.group,
          kind: CLUSTER_API_NODE_CLASS.kind,
          name: 'default',
        },
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        ],
      },
    },
    limits: { cpu: '64' },
  },
};

/**
 * The sidecar's runtime in this process, as it runs on a Cluster API workload cluster whose
 * management cluster is another one: its own API server is the workload's, the management
 * cluster's kubeconfig is MANAGEMENT_KUBECONFIG, EC2 is the emulator. Everything crosses the
 * wire (client-node over HTTPS, the EC2 SDK over HTTP).
 */
export async function startCapiHarness(
  options: { requeueMs?: number; openshift?: boolean; credentialRenewalMs?: number } = {},
): Promise<CapiHarness> {
  const registration = findDriver('CAPI', 'STANDALONE');
  if (!registration) throw new Error('no CAPI/STANDALONE driver registered');
  const pair = options.openshift
    ? await startEmulatedOpenShiftClusterApi()
    : await startEmulatedCapiCluster();
  const location = options.openshift ? OPENSHIFT_CLUSTER_API : CAPI_CLUSTER;
  // OpenShift's own Cluster API: no MANAGEMENT_KUBECONFIG, and the namespace is the default.
  const env: Record<string, string> = {
    ...pair.env,
    KUBECONFIG: pair.workloadKubeconfigPath,
    CLUSTER_API_CLUSTER_NAME: location.name,
    ...(options.openshift
      ? {}
      : {
          MANAGEMENT_KUBECONFIG: pair.managementKubeconfigPath,
          CLUSTER_API_NAMESPACE: location.namespace,
        }),
  };
  delete env.WORKLOAD_KUBECONFIG;
  const apiServers = apiServersFor(registration.targets, env, registration.sidecarRunsOn);
  const driver = registration.create({
    reader: (target) =>
      new KubeClusterObjectReader(apiServers.kubeConfig(target), apiServers.timeoutMs),
    env,
    dryRunCreate: (target, object) => apiServers.client(target).dryRunCreate(object),
    sameApiServer: apiServers.single,
    requestToken: (target, namespace, serviceAccount, seconds) =>
      apiServers.client(target).requestToken(namespace, serviceAccount, seconds),
    connection: (target) => apiServers.client(target).connection(),
  });
  const crds = await loadCustomResourceDefinitions(
    driver.provider.customResourceDefinitions(),
    CRDS_DIR,
  );
  const runtime = new SidecarRuntime({
    apiServers,
    driver,
    crds,
    identity: { namespace: 'karpenter-fleet', serviceAccount: 'karpenter-fleet-sidecar' },
    log: pino({ level: process.env.HARNESS_LOG_LEVEL ?? 'silent' }),
    version: '0.1.0-test',
    csrApprovalsPerMinute: 60,
    backupNamespace: 'openshift-config',
    clusterApi: { namespace: location.namespace, clusterName: location.name },
    requeueMs: options.requeueMs ?? 2_000,
    ...(options.credentialRenewalMs ? { credentialRenewalMs: options.credentialRenewalMs } : {}),
  });
  runtime.start();
  let generation = 0;
  return {
    pair,
    runtime,
    order: (spec = {}) => ({
      contractVersion: CONTRACT_VERSION,
      clusterId: CLUSTER_ID,
      generation: ++generation,
      platform: 'CAPI',
      topology: 'STANDALONE',
      spec: { ...DEFAULT_SPEC, ...spec },
    }),
    async stop() {
      await runtime.stop();
      await pair.stop();
    },
  };
}

/** Polls an in-process read of the emulators until it holds. */
export function until<T>(check: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  return eventually(check, { timeoutMs, intervalMs: 10, what });
}

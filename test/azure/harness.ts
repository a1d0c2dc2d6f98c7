import {
  CONTRACT_VERSION,
  type KarpenterDesiredState,
  type ReconcileOrder,
} from '@fleet/contracts';
import { findDriver, loadCustomResourceDefinitions } from '@fleet/cloud-provider';
import { KubeClusterObjectReader } from '@fleet/discovery';
import { pino } from 'pino';
import { apiServersFor } from '../../apps/sidecar/src/kube/api-servers.js';
import { SidecarRuntime } from '../../apps/sidecar/src/runtime.js';
import {
  startEmulatedAzureCluster,
  type EmulatedAzureCluster,
} from '../support/emulated-azure-cluster.js';
import { CRDS_DIR } from '../support/fixtures.js';
import { azureMarketplaceFixtureObjects } from '../support/ocp-azure-standalone.js';
import { eventually } from '../support/processes.js';

export const CLUSTER_ID = '00000000-0000-4000-8000-0000000000a2';

export interface AzureHarness {
  cluster: EmulatedAzureCluster;
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

/** A NodePool on the default AKSNodeClass (it names none), on-demand only. */
export const GENERAL_NODEPOOL = {
  name: 'general',
  spec: {
    template: {
      spec: {
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        ],
      },
    },
    limits: { cpu: '64' },
  },
};

/**
 * The sidecar's runtime in this process against an emulated OpenShift-on-Azure cluster (the
 * supported variant unless `objects` says otherwise): real client-node (HTTPS, as the sidecar's
 * service account with deploy/sidecar/azure's RBAC) and real @azure/arm-* clients to the ARM
 * emulator, through the Azure driver from the registry.
 */
export async function startAzureHarness(
  options: { objects?: Record<string, unknown>[]; requeueMs?: number } = {},
): Promise<AzureHarness> {
  const cluster = await startEmulatedAzureCluster({
    objects: options.objects ?? azureMarketplaceFixtureObjects(),
  });
  const sidecar = await startAzureSidecarRuntime(cluster, options);
  return {
    cluster,
    ...sidecar,
    async stop() {
      await sidecar.stop();
      await cluster.stop();
    },
  };
}

/**
 * The sidecar's runtime in this process against an Azure cluster, emulated or real (its
 * kubeconfig and the environment a sidecar process would have). Stopping it leaves the cluster.
 */
export async function startAzureSidecarRuntime(
  cluster: { kubeconfigPath: string; sidecarEnv: Record<string, string> },
  options: { requeueMs?: number } = {},
): Promise<Omit<AzureHarness, 'cluster'>> {
  const registration = findDriver('AZURE', 'STANDALONE');
  if (!registration) throw new Error('no AZURE/STANDALONE driver registered');
  const apiServers = apiServersFor(registration.targets, { KUBECONFIG: cluster.kubeconfigPath });
  const driver = (await registration.load()).create({
    reader: (target) =>
      new KubeClusterObjectReader(apiServers.kubeConfig(target), apiServers.timeoutMs),
    // The sidecar's Entra ID client and the emulators' CA (AZURE_CA_BUNDLE).
    env: cluster.sidecarEnv,
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
    crdsFor: () => Promise.resolve(crds),
    log: pino({ level: process.env.HARNESS_LOG_LEVEL ?? 'silent' }),
    version: '0.1.0-test',
    csrApprovalsPerMinute: 60,
    backupNamespace: 'openshift-config',
    requeueMs: options.requeueMs ?? 2_000,
  });
  runtime.start();
  let generation = 0;
  return {
    runtime,
    order: (spec = {}) => ({
      contractVersion: CONTRACT_VERSION,
      clusterId: CLUSTER_ID,
      generation: ++generation,
      platform: 'AZURE',
      topology: 'STANDALONE',
      spec: { ...DEFAULT_SPEC, ...spec },
    }),
    async stop() {
      await runtime.stop();
      driver.close();
    },
  };
}

export function until<T>(check: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  return eventually(check, { timeoutMs, intervalMs: 10, what });
}

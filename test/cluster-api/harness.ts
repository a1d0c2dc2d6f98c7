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
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRDS_DIR } from '../support/fixtures.js';
import type { KubeApiServerEmulator, KubeObject } from '../support/kube-apiserver/index.js';
import { eventually } from '../support/processes.js';
import { recordRbacUsage, type RbacUsage } from '../support/rbac-usage.js';

export const CLUSTER_ID = '00000000-0000-4000-8000-00000000ca91';

/** The sidecar's identity on each API server when it runs with exactly the RBAC given. */
export interface SidecarAccess {
  user: string;
  /** every authorization decision made for that identity, from the start */
  access: RbacUsage;
}

export interface CapiHarness {
  pair: EmulatedCapiCluster;
  /** With `options.rbac`: the sidecar's service accounts and what each API server decided. */
  sidecar?: { workload: SidecarAccess; management: SidecarAccess };
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
  options: {
    requeueMs?: number;
    openshift?: boolean;
    credentialRenewalMs?: number;
    /** What a cluster holds before the sidecar starts (CRDs its watches look for at start). */
    beforeStart?: (pair: EmulatedCapiCluster) => void;
    /**
     * Run the sidecar as service accounts holding exactly these RBAC documents (deploy/'s), on
     * the workload and on the management API server, instead of as cluster-admin; every
     * authorization decision for them is recorded. On OpenShift's own Cluster API both lists
     * go to the one API server and the sidecar has one identity.
     */
    rbac?: {
      workload: KubeObject[];
      management: KubeObject[];
      /** the management-side service account (namespace, name); workload's is deploy/'s */
      managementServiceAccount: { namespace: string; name: string };
    };
  } = {},
): Promise<CapiHarness> {
  const pair = options.openshift
    ? await startEmulatedOpenShiftClusterApi()
    : await startEmulatedCapiCluster();
  options.beforeStart?.(pair);
  let kubeconfigs = {
    workload: pair.workloadKubeconfigPath,
    management: pair.managementKubeconfigPath,
  };
  let sidecar: CapiHarness['sidecar'];
  let tmp: string | undefined;
  if (options.rbac) {
    tmp = mkdtempSync(join(tmpdir(), 'fleet-capi-rbac-'));
    const identity = (
      kube: KubeApiServerEmulator,
      docs: KubeObject[],
      sa: { namespace: string; name: string },
      file: string,
    ): { path: string; access: SidecarAccess } => {
      kube.seed(docs);
      const token = kube.addServiceAccount(sa.namespace, sa.name);
      const user = `system:serviceaccount:${sa.namespace}:${sa.name}`;
      const path = join(tmp!, file);
      writeFileSync(path, kube.kubeconfigYaml(sa.namespace, token));
      return { path, access: { user, access: recordRbacUsage(kube, user) } };
    };
    const workloadSa = { namespace: 'karpenter-fleet', name: 'karpenter-fleet-sidecar' };
    if (options.openshift) {
      const one = identity(
        pair.workload,
        [...options.rbac.workload, ...options.rbac.management],
        workloadSa,
        'sidecar.kubeconfig',
      );
      kubeconfigs = { workload: one.path, management: one.path };
      sidecar = { workload: one.access, management: one.access };
    } else {
      const w = identity(pair.workload, options.rbac.workload, workloadSa, 'workload.kubeconfig');
      const m = identity(
        pair.management,
        options.rbac.management,
        options.rbac.managementServiceAccount,
        'management.kubeconfig',
      );
      kubeconfigs = { workload: w.path, management: m.path };
      sidecar = { workload: w.access, management: m.access };
    }
  }
  const sidecarRuntime = await startCapiSidecarRuntime(
    {
      kubeconfigs,
      cloudEnv: pair.env,
      location: options.openshift ? OPENSHIFT_CLUSTER_API : CAPI_CLUSTER,
      openshift: options.openshift === true,
    },
    options,
  );
  return {
    pair,
    ...(sidecar ? { sidecar } : {}),
    ...sidecarRuntime,
    async stop() {
      await sidecarRuntime.stop();
      sidecar?.workload.access.stop();
      sidecar?.management.access.stop();
      await pair.stop();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * The sidecar's runtime in this process for a Cluster API workload cluster, emulated or real: its
 * own API server is the workload's (`kubeconfigs.workload`), the management cluster's is
 * MANAGEMENT_KUBECONFIG (none on OpenShift's own Cluster API, where both are one server).
 * Stopping it leaves the clusters.
 */
export async function startCapiSidecarRuntime(
  cluster: {
    kubeconfigs: { workload: string; management: string };
    /** the cloud's endpoint and credentials (AWS_*) */
    cloudEnv: Record<string, string>;
    location: { name: string; namespace: string };
    openshift: boolean;
  },
  options: { requeueMs?: number; credentialRenewalMs?: number } = {},
): Promise<Omit<CapiHarness, 'pair' | 'sidecar'>> {
  const registration = findDriver('CAPI', 'STANDALONE');
  if (!registration) throw new Error('no CAPI/STANDALONE driver registered');
  const { kubeconfigs, location } = cluster;
  // OpenShift's own Cluster API: no MANAGEMENT_KUBECONFIG, and the namespace is the default.
  const env: Record<string, string> = {
    ...cluster.cloudEnv,
    KUBECONFIG: kubeconfigs.workload,
    CLUSTER_API_CLUSTER_NAME: location.name,
    ...(cluster.openshift
      ? {}
      : {
          MANAGEMENT_KUBECONFIG: kubeconfigs.management,
          CLUSTER_API_NAMESPACE: location.namespace,
        }),
  };
  delete env.WORKLOAD_KUBECONFIG;
  const apiServers = apiServersFor(registration.targets, env, registration.sidecarRunsOn);
  const driver = (await registration.load()).create({
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
    },
  };
}

/** Polls an in-process read of the emulators until it holds. */
export function until<T>(check: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  return eventually(check, { timeoutMs, intervalMs: 10, what });
}

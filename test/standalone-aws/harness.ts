import { EC2Client } from '@aws-sdk/client-ec2';
import {
  CONTRACT_VERSION,
  type KarpenterDesiredState,
  type ReconcileOrder,
} from '@fleet/contracts';
import {
  findDriver,
  loadCustomResourceDefinitions,
  type TargetedObject,
} from '@fleet/cloud-provider';
import { KubeClusterObjectReader } from '@fleet/discovery';
import { pino } from 'pino';

import { apiServersFor } from '../../apps/sidecar/src/kube/api-servers.js';
import { SidecarRuntime } from '../../apps/sidecar/src/runtime.js';
import { startEmulatedCluster, type EmulatedCluster } from '../support/emulated-cluster.js';
import { CRDS_DIR } from '../support/fixtures.js';
import { eventually } from '../support/processes.js';

export const CLUSTER_ID = '00000000-0000-4000-8000-000000000001';

let crds: Promise<TargetedObject[]> | undefined;

export interface Harness {
  cluster: EmulatedCluster;
  runtime: SidecarRuntime;
  ec2Client: EC2Client;
  /** An order at the next generation with the given changes to the (disabled) default state. */
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
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        ],
      },
    },
    limits: { cpu: '64' },
  },
};

/**
 * The sidecar's runtime in this process against an emulated OpenShift-on-AWS cluster: real
 * client-node (HTTPS) and EC2 SDK (HTTP), so every watch, apply and approval crosses the wire.
 */
export async function startHarness(
  options: {
    approvalsPerMinute?: number;
    requeueMs?: number;
    /** Deadlines short enough for a test to wait them out. */
    timeouts?: { apiServerSeconds: number; ec2RequestSeconds: number };
  } = {},
): Promise<Harness> {
  const cluster = await startEmulatedCluster();
  const sidecar = await startSidecarRuntime(cluster, options);
  return {
    cluster,
    ...sidecar,
    async stop() {
      await sidecar.stop();
      await cluster.stop();
    },
  };
}

/** What the sidecar's runtime needs of a cluster, emulated or real. */
export interface SidecarTarget {
  /** the sidecar's kubeconfig: its service account's token */
  kubeconfigPath: string;
  /** the environment a sidecar process would have (KUBECONFIG, the EC2 endpoint, credentials) */
  sidecarEnv: Record<string, string>;
  ec2: {
    region: string;
    url: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
  };
}

/**
 * The sidecar's runtime in this process against a cluster: real client-node (HTTPS) and EC2 SDK
 * (HTTP), so every watch, apply and approval crosses the wire. Stopping it leaves the cluster.
 */
export async function startSidecarRuntime(
  cluster: SidecarTarget,
  options: {
    approvalsPerMinute?: number;
    requeueMs?: number;
    timeouts?: { apiServerSeconds: number; ec2RequestSeconds: number };
  } = {},
): Promise<Omit<Harness, 'cluster'>> {
  const registration = findDriver('AWS', 'STANDALONE');
  if (!registration) throw new Error('no AWS/STANDALONE driver registered');
  // As the sidecar's service account: exactly the RBAC deploy/sidecar/standalone grants.
  const apiServers = apiServersFor(registration.targets, {
    KUBECONFIG: cluster.kubeconfigPath,
    ...(options.timeouts ? { API_SERVER_TIMEOUT_SECONDS: options.timeouts.apiServerSeconds } : {}),
  });
  const driver = (await registration.load()).create({
    reader: (target) =>
      new KubeClusterObjectReader(apiServers.kubeConfig(target), apiServers.timeoutMs),
    env: {
      ...cluster.sidecarEnv,
      ...(options.timeouts
        ? { EC2_REQUEST_TIMEOUT_SECONDS: String(options.timeouts.ec2RequestSeconds) }
        : {}),
    },
  });
  crds ??= loadCustomResourceDefinitions(driver.provider.customResourceDefinitions(), CRDS_DIR);
  const ec2Client = new EC2Client({
    region: cluster.ec2.region,
    endpoint: cluster.ec2.url,
    credentials: {
      accessKeyId: cluster.ec2.credentials.accessKeyId,
      secretAccessKey: cluster.ec2.credentials.secretAccessKey,
    },
  });
  const runtime = new SidecarRuntime({
    apiServers,
    driver,
    crds: await crds,
    identity: { namespace: 'karpenter-fleet', serviceAccount: 'karpenter-fleet-sidecar' },
    crdsFor: (version) =>
      loadCustomResourceDefinitions(driver.provider.customResourceDefinitions(version), CRDS_DIR),
    log: pino({ level: process.env.HARNESS_LOG_LEVEL ?? 'silent' }),
    version: '0.1.0-test',
    csrApprovalsPerMinute: options.approvalsPerMinute ?? 60,
    backupNamespace: 'openshift-config',
    requeueMs: options.requeueMs ?? 2_000,
  });
  runtime.start();
  let generation = 0;
  return {
    runtime,
    ec2Client,
    order: (spec = {}) => ({
      contractVersion: CONTRACT_VERSION,
      clusterId: CLUSTER_ID,
      generation: ++generation,
      platform: 'AWS',
      topology: 'STANDALONE',
      spec: { ...DEFAULT_SPEC, ...spec },
    }),
    async stop() {
      await runtime.stop();
      ec2Client.destroy();
    },
  };
}

/** Polls an in-process read of the emulator (cheap) until it holds. */
export function until<T>(check: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  return eventually(check, { timeoutMs, intervalMs: 10, what });
}

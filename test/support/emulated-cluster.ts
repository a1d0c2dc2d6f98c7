import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Ec2Emulator, loadWorld } from './ec2/index.js';
import { deployDocuments } from './deploy-manifests.js';
import { CREDENTIALS_REQUEST_CRD_PATH, fixtureClusterDir, fixtureCrdFiles } from './fixtures.js';
import { KubeApiServerEmulator, type KubeObject } from './kube-apiserver/index.js';
import { MachineConfigOperatorEmulator } from './machine-config-operator.js';
import { recordRbacUsage, type RbacUsage } from './rbac-usage.js';

/** Namespaces a real OpenShift cluster has before anyone installs Karpenter. */
export const OPENSHIFT_NAMESPACES = [
  'openshift-machine-api',
  'openshift-cloud-credential-operator',
  'openshift-config',
  'openshift-config-managed',
];

export interface EmulatedCluster {
  kube: KubeApiServerEmulator;
  ec2: Ec2Emulator;
  /**
   * Standalone OpenShift: the Machine Config Operator and Server (pool status, rendered
   * configurations, what a booting instance fetches). Absent on fixtures without worker user data.
   */
  mco?: MachineConfigOperatorEmulator;
  /** the sidecar's kubeconfig: its service account's token, so exactly deploy/'s RBAC applies */
  kubeconfigPath: string;
  /** the service account the sidecar runs as */
  sidecarUser: string;
  /** every authorization decision made for the sidecar's service account, from the start */
  sidecarAccess: RbacUsage;
  /** Environment a sidecar process needs to reach this cluster and its cloud. */
  sidecarEnv: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * An OpenShift-on-AWS cluster as the sidecar sees it: an API server loaded with the real CRDs and
 * the fixture cluster's objects, and the matching EC2 world, both speaking their wire protocols.
 */
export async function startEmulatedCluster(
  fixture = 'ocp-aws-standalone',
): Promise<EmulatedCluster> {
  const dir = fixtureClusterDir(fixture);
  const kube = new KubeApiServerEmulator();
  await kube.start();
  for (const file of [...fixtureCrdFiles(), CREDENTIALS_REQUEST_CRD_PATH]) {
    kube.addCrd(parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
  }
  kube.seed(
    OPENSHIFT_NAMESPACES.map((name) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    })),
  );
  kube.seedFromDir(dir);
  // The sidecar gets the ServiceAccount and RBAC that deploy/sidecar/standalone grants it, and
  // nothing else: a permission the code needs but the manifest lacks fails a test.
  kube.seed(
    deployDocuments()
      .filter((f) => f.file === 'sidecar/standalone/rbac.yaml')
      .flatMap((f) => f.docs as KubeObject[]),
  );
  const sidecarToken = kube.addServiceAccount('karpenter-fleet', 'karpenter-fleet-sidecar');
  const sidecarUser = 'system:serviceaccount:karpenter-fleet:karpenter-fleet-sidecar';
  const sidecarAccess = recordRbacUsage(kube, sidecarUser);

  const ec2 = new Ec2Emulator(loadWorld(join(dir, 'ec2-world.json')));
  await ec2.start();
  const mco = await startMachineConfigOperator(kube, dir);

  const tmp = mkdtempSync(join(tmpdir(), 'fleet-cluster-'));
  const kubeconfigPath = join(tmp, 'kubeconfig');
  writeFileSync(kubeconfigPath, kube.kubeconfigYaml('default', sidecarToken));
  return {
    kube,
    ec2,
    ...(mco ? { mco } : {}),
    kubeconfigPath,
    sidecarUser,
    sidecarAccess,
    sidecarEnv: {
      KUBECONFIG: kubeconfigPath,
      AWS_ENDPOINT_URL_EC2: ec2.url,
      AWS_ENDPOINT_URL_SQS: ec2.url,
      AWS_ENDPOINT_URL_IAM: ec2.url,
      AWS_REGION: ec2.region,
      AWS_ACCESS_KEY_ID: ec2.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: ec2.credentials.secretAccessKey,
    },
    async stop() {
      await mco?.stop();
      sidecarAccess.stop();
      await Promise.all([kube.stop(), ec2.stop()]);
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * The cluster's Machine Config Server is where its worker Ignition pointer says, trusted through
 * the CA bundle that pointer carries.
 */
export async function startMachineConfigOperator(
  kube: KubeApiServerEmulator,
  dir: string,
): Promise<MachineConfigOperatorEmulator | undefined> {
  const file = join(dir, 'secret-worker-user-data.yaml');
  if (!existsSync(file)) return undefined;
  const secret = parse(readFileSync(file, 'utf8')) as { stringData: { userData: string } };
  const pointer = JSON.parse(secret.stringData.userData) as {
    ignition: {
      config: { merge: { source: string }[] };
      security?: { tls?: { certificateAuthorities?: unknown } };
    };
  };
  const mco = new MachineConfigOperatorEmulator(
    kube,
    new URL(pointer.ignition.config.merge[0]!.source).origin,
    JSON.stringify(pointer.ignition.security?.tls?.certificateAuthorities),
  );
  await mco.start();
  return mco;
}

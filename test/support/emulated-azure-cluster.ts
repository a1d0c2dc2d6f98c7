import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ArmEmulator, type ArmWorld } from './arm/arm-emulator.js';
import { deployDocuments } from './deploy-manifests.js';
import { CREDENTIALS_REQUEST_CRD_PATH, fixtureClusterDir, fixtureCrdFiles } from './fixtures.js';
import { upstreamCrdFiles } from './capi-aws-workload.js';
import { KubeApiServerEmulator, type KubeObject } from './kube-apiserver/index.js';
import { azureFixtureArmWorld } from './ocp-azure-standalone.js';
import { startMachineConfigOperator } from './emulated-cluster.js';
import type { MachineConfigOperatorEmulator } from './machine-config-operator.js';
import { recordRbacUsage, type RbacUsage } from './rbac-usage.js';

const OPENSHIFT_NAMESPACES = [
  'openshift-machine-api',
  'openshift-cloud-credential-operator',
  'openshift-config',
  'openshift-config-managed',
];

/** The sidecar's own service principal in the fixture's arm-world.json. */
const SIDECAR_CLIENT = {
  clientId: '7a1c3e5f-9b2d-4f6a-8c0e-2d4f6a8c0e1b',
  clientSecret: 'made-up-sidecar-client-secret',
};

/** An image reference for the operand (the fork publishes none); never pulled here. */
export const TEST_AZURE_KARPENTER_IMAGE = `quay.io/karpenter-fleet/azure-karpenter-provider@sha256:${'ab'.repeat(32)}`;

/**
 * What a sidecar process needs to reach an Azure cluster (its kubeconfig), Entra ID and ARM (the
 * emulator at `armUrl`, trusted through the CA file `caPath`), as the sidecar's service principal.
 */
export function azureSidecarEnv(
  kubeconfigPath: string,
  caPath: string,
  armUrl: string,
  tenantID: string,
): Record<string, string> {
  return {
    KUBECONFIG: kubeconfigPath,
    AZURE_CA_BUNDLE: caPath,
    AZURE_AUTHORITY_HOST: armUrl,
    AZURE_ENDPOINT_URL_ARM: armUrl,
    AZURE_TENANT_ID: tenantID,
    AZURE_CLIENT_ID: SIDECAR_CLIENT.clientId,
    AZURE_CLIENT_SECRET: SIDECAR_CLIENT.clientSecret,
    AZURE_KARPENTER_IMAGE: TEST_AZURE_KARPENTER_IMAGE,
  };
}

export interface EmulatedAzureCluster {
  kube: KubeApiServerEmulator;
  arm: ArmEmulator;
  /** The MCO and its Machine Config Server, where the worker Ignition pointer says. */
  mco?: MachineConfigOperatorEmulator;
  kubeconfigPath: string;
  sidecarUser: string;
  sidecarAccess: RbacUsage;
  /** What a sidecar process needs to reach this cluster, Entra ID and ARM (trusting their CA). */
  sidecarEnv: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * An OpenShift-on-Azure cluster as the sidecar sees it: the API-server emulator with the real
 * CRDs and `objects` (the fixture's unless given), the sidecar's ServiceAccount with exactly
 * deploy/sidecar/azure's RBAC, and the ARM emulator (also the tenant's Entra ID) holding `world`.
 */
export async function startEmulatedAzureCluster(
  options: { objects?: Record<string, unknown>[]; world?: ArmWorld } = {},
): Promise<EmulatedAzureCluster> {
  const kube = new KubeApiServerEmulator();
  await kube.start();
  // An Azure cluster's karpenter.sh CRDs are the fork's (the Azure driver installs those).
  for (const file of [
    ...fixtureCrdFiles(),
    ...upstreamCrdFiles('karpenter-azure-openshift-pr6'),
    CREDENTIALS_REQUEST_CRD_PATH,
  ]) {
    kube.addCrd(parse(readFileSync(file, 'utf8')) as Record<string, unknown>);
  }
  kube.seed(
    OPENSHIFT_NAMESPACES.map((name) => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    })),
  );
  if (options.objects) kube.seed(options.objects);
  else kube.seedFromDir(fixtureClusterDir('ocp-azure-standalone'));
  kube.seed(
    deployDocuments()
      .filter((f) => f.file === 'sidecar/azure/rbac.yaml')
      .flatMap((f) => f.docs as KubeObject[]),
  );
  const sidecarToken = kube.addServiceAccount('karpenter-fleet', 'karpenter-fleet-sidecar');
  const sidecarUser = 'system:serviceaccount:karpenter-fleet:karpenter-fleet-sidecar';
  const sidecarAccess = recordRbacUsage(kube, sidecarUser);

  const arm = new ArmEmulator(options.world ?? azureFixtureArmWorld());
  await arm.start();
  // The launch gate opens once the MCO has rendered a NodeClass's pool (as on AWS).
  const mco = await startMachineConfigOperator(kube, fixtureClusterDir('ocp-azure-standalone'));
  const tmp = mkdtempSync(join(tmpdir(), 'fleet-azure-cluster-'));
  const kubeconfigPath = join(tmp, 'kubeconfig');
  writeFileSync(kubeconfigPath, kube.kubeconfigYaml('default', sidecarToken));
  const caPath = join(tmp, 'arm-ca.pem');
  writeFileSync(caPath, arm.caPem);
  const world = options.world ?? azureFixtureArmWorld();
  return {
    kube,
    arm,
    ...(mco ? { mco } : {}),
    kubeconfigPath,
    sidecarUser,
    sidecarAccess,
    sidecarEnv: azureSidecarEnv(kubeconfigPath, caPath, arm.url, world.tenantID),
    async stop() {
      await mco?.stop();
      sidecarAccess.stop();
      await Promise.all([kube.stop(), arm.stop()]);
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

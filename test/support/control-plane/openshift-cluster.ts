import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ArmEmulator } from '../arm/arm-emulator.js';
import { deployDocuments } from '../deploy-manifests.js';
import { Ec2Emulator, loadWorld } from '../ec2/index.js';
import { OPENSHIFT_NAMESPACES } from '../emulated-cluster.js';
import { azureSidecarEnv } from '../emulated-azure-cluster.js';
import { CREDENTIALS_REQUEST_CRD_PATH, fixtureClusterDir, fixtureCrdFiles } from '../fixtures.js';
import { readYamlDir, type KubeObject } from '../kube-apiserver/index.js';
import { azureFixtureArmWorld, azureMarketplaceFixtureObjects } from '../ocp-azure-standalone.js';
import { RealControlPlane } from './control-plane.js';

export const SIDECAR_USER = 'system:serviceaccount:karpenter-fleet:karpenter-fleet-sidecar';

/** A standalone OpenShift cluster on a real control plane, and its cloud's emulator. */
export interface RealOpenShiftCluster {
  plane: RealControlPlane;
  /** the sidecar's kubeconfig: its service account's token (TokenRequest), so deploy/'s RBAC applies */
  kubeconfigPath: string;
  /** what a sidecar process would have: KUBECONFIG, the cloud's endpoints and credentials */
  sidecarEnv: Record<string, string>;
  stop(): Promise<void>;
}

export interface RealOpenShiftAwsCluster extends RealOpenShiftCluster {
  ec2: Ec2Emulator;
}

export interface RealOpenShiftAzureCluster extends RealOpenShiftCluster {
  arm: ArmEmulator;
}

/**
 * Lays an OpenShift cluster on a fresh control plane: the OpenShift CRDs (Karpenter's are not
 * installed: that is the sidecar's job), `objects`, and the ServiceAccount and RBAC of
 * `deploy/<rbacFile>` and nothing more for the sidecar, whose token comes from TokenRequest.
 */
async function startOpenShiftControlPlane(
  name: string,
  objects: readonly KubeObject[],
  rbacFile: string,
  tmp: string,
): Promise<{ plane: RealControlPlane; kubeconfigPath: string }> {
  const plane = await RealControlPlane.start({ name, audit: true });
  try {
    await plane.installCrds([
      ...fixtureCrdFiles().filter((file) => !file.includes('/karpenter/')),
      CREDENTIALS_REQUEST_CRD_PATH,
    ]);
    await plane.seed([
      ...OPENSHIFT_NAMESPACES.map((namespace) => ({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespace },
      })),
      ...objects,
      ...deployDocuments()
        .filter((f) => f.file === rbacFile)
        .flatMap((f) => f.docs as KubeObject[]),
    ]);
    const token = await plane.serviceAccountToken('karpenter-fleet', 'karpenter-fleet-sidecar');
    const kubeconfigPath = join(tmp, 'kubeconfig');
    writeFileSync(kubeconfigPath, plane.kubeconfigYaml({ token }, 'karpenter-fleet-sidecar'));
    return { plane, kubeconfigPath };
  } catch (err) {
    await plane.stop();
    throw err;
  }
}

/** Standalone OpenShift on AWS (test/fixtures/clusters/ocp-aws-standalone), its EC2 world emulated. */
export async function startRealOpenShiftAwsCluster(
  fixture = 'ocp-aws-standalone',
): Promise<RealOpenShiftAwsCluster> {
  const dir = fixtureClusterDir(fixture);
  const tmp = mkdtempSync(join(tmpdir(), 'fleet-real-cluster-'));
  const ec2 = new Ec2Emulator(loadWorld(join(dir, 'ec2-world.json')));
  try {
    await ec2.start();
    const { plane, kubeconfigPath } = await startOpenShiftControlPlane(
      fixture,
      readYamlDir(dir),
      'sidecar/standalone/rbac.yaml',
      tmp,
    );
    return {
      plane,
      ec2,
      kubeconfigPath,
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
        await Promise.all([plane.stop(), ec2.stop()]);
        rmSync(tmp, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await ec2.stop();
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Standalone OpenShift on Azure (the fixture's objects unless given), with ARM and Entra ID
 * emulated, as test/support/emulated-azure-cluster.ts lays it on the emulator.
 */
export async function startRealOpenShiftAzureCluster(
  objects: readonly KubeObject[] = azureMarketplaceFixtureObjects(),
): Promise<RealOpenShiftAzureCluster> {
  const tmp = mkdtempSync(join(tmpdir(), 'fleet-real-azure-cluster-'));
  const world = azureFixtureArmWorld();
  const arm = new ArmEmulator(world);
  try {
    await arm.start();
    const { plane, kubeconfigPath } = await startOpenShiftControlPlane(
      'ocp-azure-standalone',
      objects,
      'sidecar/azure/rbac.yaml',
      tmp,
    );
    const caPath = join(tmp, 'arm-ca.pem');
    writeFileSync(caPath, arm.caPem);
    return {
      plane,
      arm,
      kubeconfigPath,
      sidecarEnv: azureSidecarEnv(kubeconfigPath, caPath, arm.url, world.tenantID),
      async stop() {
        await Promise.all([plane.stop(), arm.stop()]);
        rmSync(tmp, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await arm.stop();
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

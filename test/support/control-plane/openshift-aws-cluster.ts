import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { deployDocuments } from '../deploy-manifests.js';
import { Ec2Emulator, loadWorld } from '../ec2/index.js';
import { OPENSHIFT_NAMESPACES } from '../emulated-cluster.js';
import { CREDENTIALS_REQUEST_CRD_PATH, fixtureClusterDir, fixtureCrdFiles } from '../fixtures.js';
import { readYamlDir, type KubeObject } from '../kube-apiserver/index.js';
import { RealControlPlane } from './control-plane.js';

export const SIDECAR_USER = 'system:serviceaccount:karpenter-fleet:karpenter-fleet-sidecar';

export interface RealOpenShiftAwsCluster {
  plane: RealControlPlane;
  ec2: Ec2Emulator;
  /** the sidecar's kubeconfig: its service account's token (TokenRequest), so deploy/'s RBAC applies */
  kubeconfigPath: string;
  sidecarEnv: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A standalone OpenShift-on-AWS cluster on a real control plane: the OpenShift CRDs installed
 * (Karpenter's are not: installing them is the sidecar's job), the fixture cluster's objects, the
 * ServiceAccount and RBAC of deploy/sidecar/standalone and nothing more for the sidecar, and the
 * fixture's EC2 world in the EC2 emulator.
 */
export async function startRealOpenShiftAwsCluster(
  fixture = 'ocp-aws-standalone',
): Promise<RealOpenShiftAwsCluster> {
  const dir = fixtureClusterDir(fixture);
  const plane = await RealControlPlane.start({ name: fixture, audit: true });
  const ec2 = new Ec2Emulator(loadWorld(join(dir, 'ec2-world.json')));
  const tmp = mkdtempSync(join(tmpdir(), 'fleet-real-cluster-'));
  const stop = async () => {
    await Promise.all([plane.stop(), ec2.stop()]);
    rmSync(tmp, { recursive: true, force: true });
  };
  try {
    await ec2.start();
    await plane.installCrds([
      ...fixtureCrdFiles().filter((file) => !file.includes('/karpenter/')),
      CREDENTIALS_REQUEST_CRD_PATH,
    ]);
    await plane.seed([
      ...OPENSHIFT_NAMESPACES.map((name) => ({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
      })),
      ...readYamlDir(dir),
      ...deployDocuments()
        .filter((f) => f.file === 'sidecar/standalone/rbac.yaml')
        .flatMap((f) => f.docs as KubeObject[]),
    ]);
    const token = await plane.serviceAccountToken('karpenter-fleet', 'karpenter-fleet-sidecar');
    const kubeconfigPath = join(tmp, 'kubeconfig');
    writeFileSync(kubeconfigPath, plane.kubeconfigYaml({ token }, 'karpenter-fleet-sidecar'));
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
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

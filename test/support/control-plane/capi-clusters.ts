import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CAPI_CLUSTER, CAPI_FIXTURE, upstreamCrdFiles } from '../capi-aws-workload.js';
import { deployDocuments } from '../deploy-manifests.js';
import { Ec2Emulator, loadWorld } from '../ec2/index.js';
import { fixtureClusterDir } from '../fixtures.js';
import { readYamlDir, type KubeObject } from '../kube-apiserver/index.js';
import { startControlPlanePair, type RealControlPlane } from './control-plane.js';

export const WORKLOAD_SIDECAR_USER =
  'system:serviceaccount:karpenter-fleet:karpenter-fleet-sidecar';

/** A Cluster API workload cluster and its management cluster, each on a real control plane. */
export interface RealCapiClusters {
  management: RealControlPlane;
  workload: RealControlPlane;
  ec2: Ec2Emulator;
  /** the sidecar's kubeconfigs: each server's service account of deploy/sidecar/capi (TokenRequest) */
  kubeconfigs: { workload: string; management: string };
  /** the management-side service account's username */
  managementSidecarUser: string;
  /** the cloud's endpoint and credentials */
  cloudEnv: Record<string, string>;
  stop(): Promise<void>;
}

const capiRbac = (file: 'rbac.yaml' | 'management-rbac.yaml'): KubeObject[] =>
  deployDocuments()
    .filter((f) => f.file === `sidecar/capi/${file}`)
    .flatMap((f) => f.docs as KubeObject[]);

/**
 * The vendored Cluster API CRDs (its main branch) store v1beta2 and rely on Cluster API's
 * conversion webhook to serve v1beta1, which the sidecar and the fixture speak. No Cluster API
 * controller runs here yet, so without the webhook a real API server would keep a v1beta1
 * object's status only as far as the v1beta2 schema allows (it dropped `failureDomains` and
 * `infrastructureReady`). The management server stores v1beta1 instead, as Cluster API v1.10's
 * own CRDs do; the day Cluster API itself runs here, its webhook makes this unnecessary.
 */
export function storeV1beta1(crd: KubeObject): KubeObject {
  const versions = (crd.spec as { versions: { name: string; storage: boolean }[] }).versions;
  if (!versions.some((v) => v.name === 'v1beta1')) return crd;
  return {
    ...crd,
    spec: {
      ...(crd.spec as object),
      versions: versions.map((v) => ({ ...v, storage: v.name === 'v1beta1' })),
    },
  };
}

/**
 * test/fixtures/clusters/capi-aws-workload on two real control planes, as
 * test/support/capi-aws-workload.ts lays it on two emulators: the management server serves the
 * Cluster API and CAPA CRDs and holds the fixture's objects and the `<cluster>-kubeconfig` Secret
 * Cluster API writes for the workload cluster; the workload server has no Karpenter CRD (the
 * sidecar installs them). The sidecar's service accounts hold exactly deploy/sidecar/capi's RBAC
 * on each server.
 */
export async function startRealCapiClusters(): Promise<RealCapiClusters> {
  const dir = fixtureClusterDir(CAPI_FIXTURE);
  const tmp = mkdtempSync(join(tmpdir(), 'fleet-real-capi-'));
  const ec2 = new Ec2Emulator(loadWorld(join(dir, 'ec2-world.json')));
  let management: RealControlPlane | undefined;
  let workload: RealControlPlane | undefined;
  const stop = async () => {
    await Promise.all([management?.stop(), workload?.stop(), ec2.stop()]);
    rmSync(tmp, { recursive: true, force: true });
  };
  try {
    [management, workload] = await startControlPlanePair(
      { name: 'management', audit: true },
      { name: 'workload', audit: true },
    );
    await ec2.start();
    await management.installCrds(
      [...upstreamCrdFiles('cluster-api'), ...upstreamCrdFiles('cluster-api-provider-aws')],
      storeV1beta1,
    );
    const managementRbac = capiRbac('management-rbac.yaml');
    const managementSa = managementRbac.find((d) => d.kind === 'ServiceAccount')!.metadata!;
    await management.seed([
      ...readYamlDir(dir),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: `${CAPI_CLUSTER.name}-kubeconfig`,
          namespace: CAPI_CLUSTER.namespace,
          labels: { 'cluster.x-k8s.io/cluster-name': CAPI_CLUSTER.name },
        },
        type: 'cluster.x-k8s.io/secret',
        stringData: { value: workload.kubeconfigYaml() },
      },
      ...managementRbac,
    ]);
    await workload.seed(capiRbac('rbac.yaml'));
    const kubeconfigs = {
      workload: join(tmp, 'workload.kubeconfig'),
      management: join(tmp, 'management.kubeconfig'),
    };
    writeFileSync(
      kubeconfigs.workload,
      workload.kubeconfigYaml(
        { token: await workload.serviceAccountToken('karpenter-fleet', 'karpenter-fleet-sidecar') },
        'karpenter-fleet-sidecar',
      ),
    );
    writeFileSync(
      kubeconfigs.management,
      management.kubeconfigYaml(
        {
          token: await management.serviceAccountToken(managementSa.namespace!, managementSa.name!),
        },
        'karpenter-fleet-sidecar',
      ),
    );
    return {
      management,
      workload,
      ec2,
      kubeconfigs,
      managementSidecarUser: `system:serviceaccount:${managementSa.namespace}:${managementSa.name}`,
      cloudEnv: {
        AWS_ENDPOINT_URL_EC2: ec2.url,
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

// A Cluster API workload cluster on AWS and the management cluster that holds it
// (test/fixtures/clusters/capi-aws-workload): two API servers and the EC2 world, each speaking
// its wire protocol.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AWS_TEMPLATE_PARSER,
  InMemoryClusterObjectReader,
  discoverClusterApi,
  type ClusterApiInfrastructure,
} from '@fleet/discovery';
import { Ec2Emulator, loadWorld } from './ec2/index.js';
import { CRDS_DIR, fixtureClusterDir } from './fixtures.js';
import { KubeApiServerEmulator, readYamlDir, type KubeObject } from './kube-apiserver/index.js';

export const CAPI_FIXTURE = 'capi-aws-workload';
/** The workload cluster's name, and the management namespace its CAPI objects live in. */
export const CAPI_CLUSTER = { name: 'capi-east', namespace: 'capi-east' } as const;

export interface EmulatedCapiCluster {
  /** Holds Cluster, MachineDeployments, MachineSets, Machines, AWSMachineTemplates. */
  management: KubeApiServerEmulator;
  /** Holds Nodes, CSRs, NodePools, NodeClaims and the Karpenter CRDs. */
  workload: KubeApiServerEmulator;
  ec2: Ec2Emulator;
  /** Cluster-admin kubeconfigs of each API server. */
  managementKubeconfigPath: string;
  workloadKubeconfigPath: string;
  /** Environment a process needs to reach both API servers and the cloud. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** The fixture's objects, as its management cluster holds them (for in-memory readers). */
export function capiFixtureObjects(): KubeObject[] {
  return readYamlDir(fixtureClusterDir(CAPI_FIXTURE));
}

/** What discovery makes of the fixture's management objects (CAPA templates, no EC2 call). */
export async function capiFixtureInfrastructure(): Promise<ClusterApiInfrastructure> {
  const result = await discoverClusterApi({
    reader: new InMemoryClusterObjectReader(capiFixtureObjects()),
    clusterName: CAPI_CLUSTER.name,
    namespace: CAPI_CLUSTER.namespace,
    infrastructure: [AWS_TEMPLATE_PARSER],
  });
  if (!result.ok) throw new Error(result.message);
  return result.infrastructure;
}

/** CRD files of one upstream group directory (libs/crd-schema/upstream/<dir>). */
export function upstreamCrdFiles(dir: string, filter: (file: string) => boolean = () => true) {
  return readdirSync(join(CRDS_DIR, dir))
    .filter((f) => f.endsWith('.yaml') && filter(f))
    .sort()
    .map((f) => join(CRDS_DIR, dir, f));
}

/** kubeadm's control plane: three Nodes exist before any worker does. */
function controlPlaneNodes(): KubeObject[] {
  return ['a', 'b', 'c'].map((zone, i) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `ip-10-0-${i * 32}-10.ec2.internal`,
      labels: {
        'node-role.kubernetes.io/control-plane': '',
        'topology.kubernetes.io/zone': `us-east-1${zone}`,
        'node.kubernetes.io/instance-type': 'm6i.large',
        'kubernetes.io/arch': 'amd64',
      },
    },
    spec: {
      providerID: `aws:///us-east-1${zone}/i-0c0ntr0lp1a${String(i).padStart(6, '0')}`,
      taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }],
    },
  }));
}

/**
 * Starts the pair. The management server serves the Cluster API and CAPA CRDs (validating every
 * write against them) and holds the fixture's objects plus the `<cluster>-kubeconfig` Secret
 * CAPI writes for the workload cluster; the workload server serves the Karpenter CRDs of the
 * default release and has the control-plane Nodes.
 */
export async function startEmulatedCapiCluster(): Promise<EmulatedCapiCluster> {
  const dir = fixtureClusterDir(CAPI_FIXTURE);
  const management = new KubeApiServerEmulator();
  const workload = new KubeApiServerEmulator();
  await Promise.all([management.start(), workload.start()]);

  management.loadCrdFiles([
    ...upstreamCrdFiles('cluster-api'),
    ...upstreamCrdFiles('cluster-api-provider-aws'),
  ]);
  management.seedFromDir(dir);
  management.seed([
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
  ]);

  // The ClusterAPINodeClass CRD is the fleet's to install; only Karpenter core's are there.
  workload.loadCrdFiles(upstreamCrdFiles('karpenter', (f) => f.startsWith('karpenter.sh_')));
  workload.seed(controlPlaneNodes());

  const ec2 = new Ec2Emulator(loadWorld(join(dir, 'ec2-world.json')));
  await ec2.start();

  const tmp = mkdtempSync(join(tmpdir(), 'fleet-capi-'));
  const managementKubeconfigPath = join(tmp, 'management.kubeconfig');
  const workloadKubeconfigPath = join(tmp, 'workload.kubeconfig');
  writeFileSync(managementKubeconfigPath, management.kubeconfigYaml(CAPI_CLUSTER.namespace));
  writeFileSync(workloadKubeconfigPath, workload.kubeconfigYaml());
  return {
    management,
    workload,
    ec2,
    managementKubeconfigPath,
    workloadKubeconfigPath,
    env: {
      KUBECONFIG: managementKubeconfigPath,
      WORKLOAD_KUBECONFIG: workloadKubeconfigPath,
      AWS_ENDPOINT_URL_EC2: ec2.url,
      AWS_REGION: ec2.region,
      AWS_ACCESS_KEY_ID: ec2.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: ec2.credentials.secretAccessKey,
    },
    async stop() {
      await Promise.all([management.stop(), workload.stop(), ec2.stop()]);
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** OpenShift's own Cluster API: its namespace, where the Cluster is named the infrastructure name. */
export const OPENSHIFT_CLUSTER_API = {
  name: 'capi-east',
  namespace: 'openshift-cluster-api',
} as const;

/**
 * OpenShift's own Cluster API: one API server holds the Cluster API objects (in
 * `openshift-cluster-api`, a release that serves MachineDeployments without a denying policy),
 * the Karpenter CRDs and the Nodes. `management` and `workload` are the same emulator.
 */
export async function startEmulatedOpenShiftClusterApi(): Promise<EmulatedCapiCluster> {
  const dir = fixtureClusterDir(CAPI_FIXTURE);
  const kube = new KubeApiServerEmulator();
  await kube.start();
  kube.loadCrdFiles([
    ...upstreamCrdFiles('cluster-api'),
    ...upstreamCrdFiles('cluster-api-provider-aws'),
    ...upstreamCrdFiles('karpenter', (f) => f.startsWith('karpenter.sh_')),
  ]);
  kube.seed([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPENSHIFT_CLUSTER_API.namespace } },
    ...readYamlDir(dir)
      .filter((o) => o.kind !== 'Namespace')
      .map((o) => ({
        ...o,
        metadata: { ...o.metadata, namespace: OPENSHIFT_CLUSTER_API.namespace },
      })),
    ...controlPlaneNodes(),
  ]);
  const ec2 = new Ec2Emulator(loadWorld(join(dir, 'ec2-world.json')));
  await ec2.start();
  const tmp = mkdtempSync(join(tmpdir(), 'fleet-ocp-capi-'));
  const kubeconfigPath = join(tmp, 'kubeconfig');
  writeFileSync(kubeconfigPath, kube.kubeconfigYaml());
  return {
    management: kube,
    workload: kube,
    ec2,
    managementKubeconfigPath: kubeconfigPath,
    workloadKubeconfigPath: kubeconfigPath,
    env: {
      KUBECONFIG: kubeconfigPath,
      AWS_ENDPOINT_URL_EC2: ec2.url,
      AWS_REGION: ec2.region,
      AWS_ACCESS_KEY_ID: ec2.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: ec2.credentials.secretAccessKey,
    },
    async stop() {
      await Promise.all([kube.stop(), ec2.stop()]);
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

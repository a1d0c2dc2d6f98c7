import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  CAPI_CLUSTER,
  CRDS_DIR,
  capiFixtureObjects,
  loadCrdValidator,
  startEmulatedCapiCluster,
  type EmulatedCapiCluster,
} from '@fleet/testing';
import {
  AWS_TEMPLATE_PARSER,
  InMemoryClusterObjectReader,
  discoverClusterApi,
  type ClusterApiInfrastructure,
} from '@fleet/discovery';
import { join } from 'node:path';
import type { KubeObject, TargetedObject } from '../types.js';
import { awsInfrastructureProvider } from './aws/infrastructure.js';
import { KARPENTER_NODE_GROUP_LABEL } from './constants.js';
import type { InfrastructureProvider } from './infrastructure.js';
import { renderKarpenterNodeGroups } from './machine-deployments.js';
import { nodeGroupSelector } from './operand.js';

const MIN_SIZE = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size';
const MAX_SIZE = 'cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size';

/**
 * The Cluster Autoscaler's Cluster API provider (clusterapi_nodegroup.go, newNodeGroupFromScalableResource):
 * a missing min-size is 0, and a scalable resource is a node group when its max-size is above 0
 * (and not below min). Written out so the test judges by its rule, not by ours.
 */
function clusterAutoscalerManages(annotations: Record<string, string> = {}): boolean {
  const min = Number(annotations[MIN_SIZE] ?? '0');
  const max = Number(annotations[MAX_SIZE] ?? '0');
  return max > 0 && max >= min;
}

/** karpenter-provider-cluster-api's MachineDeployment selection: by label only. */
function providerSelects(md: KubeObject, matchLabels: Record<string, string>): boolean {
  const labels = md.metadata.labels ?? {};
  return Object.entries(matchLabels).every(([k, v]) => labels[k] === v);
}

describe('renderKarpenterNodeGroups (capi-aws-workload, capacities from the EC2 emulator)', () => {
  let pair: EmulatedCapiCluster;
  let ec2: EC2Client;
  let infra: ClusterApiInfrastructure;
  let aws: InfrastructureProvider;

  beforeAll(async () => {
    pair = await startEmulatedCapiCluster();
    ec2 = new EC2Client({ ...pair.ec2.clientConfig(), maxAttempts: 1 });
    aws = awsInfrastructureProvider(() => ec2);
    const result = await discoverClusterApi({
      reader: new InMemoryClusterObjectReader(capiFixtureObjects()),
      clusterName: CAPI_CLUSTER.name,
      namespace: CAPI_CLUSTER.namespace,
      infrastructure: [AWS_TEMPLATE_PARSER],
    });
    if (!result.ok) throw new Error(result.message);
    infra = result.infrastructure;
  });
  afterAll(async () => {
    ec2.destroy();
    await pair.stop();
  });

  async function render(types: string[]): Promise<TargetedObject[]> {
    const described = await aws.describeCapacities(types);
    if (!described.ok) throw new Error(described.message);
    return renderKarpenterNodeGroups({
      infra,
      capacities: described.capacities,
      templateKind: aws.templateKind,
      templateSpecFor: (t) => aws.templateSpecFor(infra.template, t),
    });
  }

  const mds = (objects: TargetedObject[]) =>
    objects.map((o) => o.object).filter((o) => o.kind === 'MachineDeployment');

  it('one MachineDeployment per allowed type and failure domain, at zero replicas, with the capacity annotations from DescribeInstanceTypes', async () => {
    const objects = await render(['m6i.xlarge', 'g5.xlarge']);
    expect(objects.every((o) => o.target === 'management')).toBe(true);
    expect(mds(objects).map((m) => m.metadata.name)).toEqual([
      'capi-east-karpenter-g5-xlarge-us-east-1a',
      'capi-east-karpenter-g5-xlarge-us-east-1b',
      'capi-east-karpenter-g5-xlarge-us-east-1c',
      'capi-east-karpenter-m6i-xlarge-us-east-1a',
      'capi-east-karpenter-m6i-xlarge-us-east-1b',
      'capi-east-karpenter-m6i-xlarge-us-east-1c',
    ]);
    const gpu = mds(objects).find((m) => m.metadata.name.endsWith('g5-xlarge-us-east-1b'))!;
    expect(gpu.metadata.annotations).toEqual({
      'capacity.cluster-autoscaler.kubernetes.io/cpu': '4',
      'capacity.cluster-autoscaler.kubernetes.io/memory': '16384Mi',
      'capacity.cluster-autoscaler.kubernetes.io/gpu-count': '1',
      'capacity.cluster-autoscaler.kubernetes.io/gpu-type': 'nvidia.com/gpu',
      'capacity.cluster-autoscaler.kubernetes.io/ephemeral-disk': '80Gi',
      'capacity.cluster-autoscaler.kubernetes.io/maxPods': '110',
      'capacity.cluster-autoscaler.kubernetes.io/labels':
        'topology.kubernetes.io/zone=us-east-1b,node.kubernetes.io/instance-type=g5.xlarge,kubernetes.io/arch=amd64,kubernetes.io/os=linux',
    });
    expect(gpu.metadata.labels).toMatchObject({
      'cluster.x-k8s.io/cluster-name': 'capi-east',
      [KARPENTER_NODE_GROUP_LABEL]: 'capi-east',
      'topology.kubernetes.io/zone': 'us-east-1b',
      'fleet.karpenter.sh/managed-by': 'karpenter-fleet',
    });
    expect(gpu.spec).toMatchObject({
      replicas: 0,
      template: {
        spec: {
          failureDomain: 'us-east-1b',
          version: 'v1.33.4',
          bootstrap: { configRef: { kind: 'KubeadmConfigTemplate', name: 'capi-east-workers' } },
          infrastructureRef: { kind: 'AWSMachineTemplate' },
        },
      },
    });
  });

  it('clones the worker template per type, without its subnet (CAPA picks one in the failure domain)', async () => {
    const templates = (await render(['m6i.xlarge'])).filter(
      (o) => o.object.kind === 'AWSMachineTemplate',
    );
    expect(templates).toHaveLength(1);
    const spec = (templates[0]!.object.spec as { template: { spec: Record<string, unknown> } })
      .template.spec;
    expect(spec).toMatchObject({
      instanceType: 'm6i.xlarge',
      ami: { id: 'ami-0a1b2c3d4e5f60718' },
      iamInstanceProfile: 'nodes.cluster-api-provider-aws.sigs.k8s.io',
      rootVolume: { size: 80, type: 'gp3', encrypted: true },
    });
    expect(spec).not.toHaveProperty('subnet');
    for (const md of mds(await render(['m6i.xlarge'])))
      expect(
        (md.spec as { template: { spec: { infrastructureRef: { name: string } } } }).template.spec
          .infrastructureRef.name,
      ).toBe(templates[0]!.object.metadata.name);
  });

  it('no size annotation: by the Cluster Autoscaler rule none is its node group, while the worker MachineDeployments are', async () => {
    for (const md of mds(await render(['m6i.xlarge', 'c6i.2xlarge']))) {
      expect(Object.keys(md.metadata.annotations ?? {})).not.toContain(MIN_SIZE);
      expect(Object.keys(md.metadata.annotations ?? {})).not.toContain(MAX_SIZE);
      expect(clusterAutoscalerManages(md.metadata.annotations)).toBe(false);
    }
    const workers = capiFixtureObjects().filter((o) => o.kind === 'MachineDeployment');
    expect(
      workers.every((w) =>
        clusterAutoscalerManages(w.metadata?.annotations as Record<string, string>),
      ),
    ).toBe(true);
  });

  it("the provider's selector picks the fleet's MachineDeployments and none of the SRE's", async () => {
    const selector = nodeGroupSelector(infra);
    expect(mds(await render(['m6i.xlarge'])).every((m) => providerSelects(m, selector))).toBe(true);
    const workers = capiFixtureObjects().filter((o) => o.kind === 'MachineDeployment');
    expect(workers.some((w) => providerSelects(w as KubeObject, selector))).toBe(false);
  });

  it('valid against the real CRDs, and accepted by the management API server', async () => {
    const mdCrd = loadCrdValidator(
      join(CRDS_DIR, 'cluster-api/cluster.x-k8s.io_machinedeployments.yaml'),
      'v1beta1',
    );
    const templateCrd = loadCrdValidator(
      join(
        CRDS_DIR,
        'cluster-api-provider-aws/infrastructure.cluster.x-k8s.io_awsmachinetemplates.yaml',
      ),
      'v1beta2',
    );
    const objects = await render(['m6i.xlarge', 'm6g.xlarge']);
    for (const { object } of objects) {
      const result = (object.kind === 'MachineDeployment' ? mdCrd : templateCrd).validate(object);
      expect({ name: object.metadata.name, errors: result.errors }).toEqual({
        name: object.metadata.name,
        errors: [],
      });
      pair.management.apply(
        structuredClone(object) as Parameters<typeof pair.management.apply>[0],
        {
          fieldManager: 'karpenter-fleet',
        },
      );
    }
    expect(
      pair.management
        .list('cluster.x-k8s.io/v1beta1', 'MachineDeployment', CAPI_CLUSTER.namespace)
        .filter((m) => m.metadata?.labels?.[KARPENTER_NODE_GROUP_LABEL] === 'capi-east'),
    ).toHaveLength(6);
    const arm = mds(objects).find((m) => m.metadata.name.includes('m6g'))!;
    expect(
      arm.metadata.annotations?.['capacity.cluster-autoscaler.kubernetes.io/labels'],
    ).toContain('kubernetes.io/arch=arm64');
  });

  it('an instance type EC2 does not offer is refused with EC2 naming it', async () => {
    expect(await aws.describeCapacities(['m6i.xlarge', 'm9z.huge'])).toEqual({
      ok: false,
      message:
        'EC2 DescribeInstanceTypes: InvalidInstanceType: The following supplied instance types do not exist: [m9z.huge]',
    });
  });
});

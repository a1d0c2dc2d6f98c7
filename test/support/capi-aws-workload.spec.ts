import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

import {
  CAPI_CLUSTER,
  startEmulatedCapiCluster,
  type EmulatedCapiCluster,
} from './capi-aws-workload.js';

interface Listed {
  items: { metadata: { name: string }; spec: Record<string, unknown> }[];
}

describe('startEmulatedCapiCluster', () => {
  let pair: EmulatedCapiCluster;
  let management: CustomObjectsApi;
  let workload: KubeConfig;

  beforeAll(async () => {
    pair = await startEmulatedCapiCluster();
    const kc = new KubeConfig();
    kc.loadFromFile(pair.managementKubeconfigPath);
    management = kc.makeApiClient(CustomObjectsApi);
    workload = new KubeConfig();
    workload.loadFromFile(pair.workloadKubeconfigPath);
  });
  afterAll(async () => {
    await pair.stop();
  });

  const list = async (group: string, version: string, plural: string): Promise<Listed> =>
    (await management.listNamespacedCustomObject({
      group,
      version,
      namespace: CAPI_CLUSTER.namespace,
      plural,
    })) as Listed;

  it('the management cluster holds the Cluster, its MachineDeployments, MachineSets and templates', async () => {
    const cluster = (await management.getNamespacedCustomObject({
      group: 'cluster.x-k8s.io',
      version: 'v1beta1',
      namespace: CAPI_CLUSTER.namespace,
      plural: 'clusters',
      name: CAPI_CLUSTER.name,
    })) as { status: { failureDomains: Record<string, unknown> } };
    expect(Object.keys(cluster.status.failureDomains).sort()).toEqual([
      'us-east-1a',
      'us-east-1b',
      'us-east-1c',
    ]);
    const mds = await list('cluster.x-k8s.io', 'v1beta1', 'machinedeployments');
    expect(mds.items.map((m) => m.metadata.name).sort()).toEqual([
      'capi-east-c6i-us-east-1a',
      'capi-east-m6i-us-east-1a',
      'capi-east-m6i-us-east-1b',
    ]);
    expect((await list('cluster.x-k8s.io', 'v1beta1', 'machinesets')).items).toHaveLength(3);
    const templates = await list(
      'infrastructure.cluster.x-k8s.io',
      'v1beta2',
      'awsmachinetemplates',
    );
    expect(templates.items.map((t) => t.spec)).toContainEqual(
      expect.objectContaining({
        template: { spec: expect.objectContaining({ instanceType: 'c6i.2xlarge' }) },
      }),
    );
  });

  it('validates CAPI objects against the real CRDs', async () => {
    const err = await management
      .createNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta1',
        namespace: CAPI_CLUSTER.namespace,
        plural: 'machinedeployments',
        body: {
          apiVersion: 'cluster.x-k8s.io/v1beta1',
          kind: 'MachineDeployment',
          metadata: { name: 'no-template' },
          spec: { clusterName: CAPI_CLUSTER.name },
        },
      })
      .then(
        () => ({ code: 201, body: '' }),
        (e: unknown) => e as { code: number; body: string },
      );
    expect(err).toMatchObject({ code: 422 });
    expect((err as { body: string }).body).toContain('spec.template');
  });

  it('the workload cluster has its control plane, the Karpenter core CRDs, and is reachable through the kubeconfig Secret', async () => {
    const nodes = await workload.makeApiClient(CoreV1Api).listNode();
    expect(nodes.items).toHaveLength(3);
    const kinds = pair.workload.allDefs().map((d) => d.kind);
    expect(kinds).toEqual(expect.arrayContaining(['NodePool', 'NodeClaim']));
    expect(kinds).not.toContain('ClusterAPINodeClass');
    expect(kinds).not.toContain('MachineDeployment');
    const secret = pair.management.get(
      'v1',
      'Secret',
      `${CAPI_CLUSTER.name}-kubeconfig`,
      CAPI_CLUSTER.namespace,
    ) as { data: { value: string } };
    const viaSecret = new KubeConfig();
    viaSecret.loadFromString(Buffer.from(secret.data.value, 'base64').toString('utf8'));
    const again = await viaSecret.makeApiClient(CoreV1Api).listNode();
    expect(again.items).toHaveLength(3);
  });

  it('EC2 describes the instance types the templates name', async () => {
    const { DescribeInstanceTypesCommand, EC2Client } = await import('@aws-sdk/client-ec2');
    const ec2 = new EC2Client({ ...pair.ec2.clientConfig(), maxAttempts: 1 });
    const out = await ec2.send(
      new DescribeInstanceTypesCommand({ InstanceTypes: ['c6i.2xlarge', 'm6i.xlarge'] }),
    );
    ec2.destroy();
    expect(out.InstanceTypes).toHaveLength(2);
  });
});

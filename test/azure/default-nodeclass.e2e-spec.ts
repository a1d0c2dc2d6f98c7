import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '@fleet/cloud-provider';
import { azureFixtureInfrastructure } from '../support/ocp-azure-standalone.js';
import { GENERAL_NODEPOOL, startAzureHarness, until, type AzureHarness } from './harness.js';

const AKS = 'karpenter.azure.com/v1beta1';
const VAP = 'admissionregistration.k8s.io/v1';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}

/**
 * The supported variant of the Azure fixture (workers on ARO's no-plan marketplace image): the
 * sidecar installs the OpenShift fork's AKSNodeClass CRD and writes the default AKSNodeClass from
 * discovery (the API-server emulator validates it against that CRD, CEL included), the NodePool
 * with the workers' zones, the operand in PROVISION_MODE=openshift, and keeps the enforced
 * fields on every AKSNodeClass.
 */
describe('Azure: the default AKSNodeClass, NodePools and operand of a supported cluster', () => {
  let h: AzureHarness;
  const expected = azureFixtureInfrastructure();
  const sre = { username: 'alice', groups: ['system:authenticated', 'cluster-admins'] };

  beforeAll(async () => {
    h = await startAzureHarness({ requeueMs: 1_000 });
    h.cluster.kube.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'alice-cluster-admin' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'cluster-admin',
      },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
    });
  });
  afterAll(async () => h?.stop());

  it('applies the order whole and is Available', async () => {
    const result = await h.runtime.apply(
      h.order({
        enabled: true,
        nodePools: [GENERAL_NODEPOOL],
        nodeClassOverrides: { tags: { env: 'prod' } },
      }),
    );
    expect(result.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Degraded', status: 'False' }),
        expect.objectContaining({ type: 'Available', status: 'True', reason: 'AsExpected' }),
        expect.objectContaining({
          type: 'WorkerMachineSetSelected',
          status: 'True',
          message: expect.stringContaining('prod-west-q8m4d-worker-eastus1'),
        }),
      ]),
    );
    // The sidecar's Entra ID client got a token, and discovery asked ARM for the worker's pieces.
    expect(h.cluster.arm.tokenRequests).toEqual(
      expect.arrayContaining([expect.objectContaining({ status: 200 })]),
    );
    expect(
      h.cluster.arm.requests.some((r) => /subnets\/prod-west-q8m4d-worker-subnet$/i.test(r.path)),
    ).toBe(true);
  });

  it('installs the fork CRD (marketplaceImage and userData are in its schema)', () => {
    const crd = h.cluster.kube.get(
      'apiextensions.k8s.io/v1',
      'CustomResourceDefinition',
      'aksnodeclasses.karpenter.azure.com',
    );
    expect(JSON.stringify(crd?.spec)).toContain('marketplaceImage');
  });

  it('writes the default AKSNodeClass from discovery', () => {
    const nodeClass = h.cluster.kube.get(AKS, 'AKSNodeClass', 'default');
    expect(nodeClass?.metadata?.labels).toMatchObject({ [MANAGED_BY_LABEL]: MANAGED_BY_VALUE });
    expect(nodeClass?.spec).toEqual({
      // The CRD's default, filled in by the API server (the fleet does not set it): in OpenShift
      // mode the fork launches from marketplaceImage, without which the class is NotReady.
      imageFamily: 'Ubuntu',
      vnetSubnetID: expected.vnetSubnetID,
      osDiskSizeGB: 128,
      marketplaceImage: expected.worker.image,
      userData: expected.userData.replace('/config/worker', '/config/karpenter-default'),
      tags: { 'cost-center': '4411', env: 'prod', team: 'platform' },
    });
    // Its pool and user data are in place before it can launch anything.
    expect(
      h.cluster.kube.get(
        'machineconfiguration.openshift.io/v1',
        'MachineConfigPool',
        'karpenter-default',
      ),
    ).toBeDefined();
  });

  it("puts the worker MachineSets' zones and what the worker image boots on (read from ARM) on the NodePool", () => {
    const pool = h.cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general');
    const spec = pool?.spec as {
      template: { spec: { requirements: unknown[]; nodeClassRef: unknown } };
    };
    expect(spec.template.spec.nodeClassRef).toEqual({
      group: 'karpenter.azure.com',
      kind: 'AKSNodeClass',
      name: 'default',
    });
    expect(spec.template.spec.requirements).toEqual([
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      {
        key: 'topology.kubernetes.io/zone',
        operator: 'In',
        values: ['eastus-1', 'eastus-2', 'eastus-3'],
      },
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      {
        key: 'node.kubernetes.io/instance-type',
        operator: 'NotIn',
        values: ['Standard_A4_v2', 'Standard_NC6'],
      },
    ]);
  });

  it('runs the fork in PROVISION_MODE=openshift with its settings and the credentials Secret mapped for DefaultAzureCredential', () => {
    const deployment = h.cluster.kube.get(
      'apps/v1',
      'Deployment',
      'karpenter',
      'openshift-karpenter',
    );
    const container = (
      deployment?.spec as { template: { spec: { containers: { image: string; env: EnvVar[] }[] } } }
    ).template.spec.containers[0]!;
    const env = Object.fromEntries(
      container.env.map((e) => [e.name, e.value ?? e.valueFrom?.secretKeyRef?.key ?? '(field)']),
    );
    expect(env).toMatchObject({
      PROVISION_MODE: 'openshift',
      CLUSTER_NAME: 'prod-west-q8m4d',
      CLUSTER_ENDPOINT: 'https://api-int.prod-west.example.com:6443',
      VNET_SUBNET_ID: expected.vnetSubnetID,
      AZURE_NODE_RESOURCE_GROUP: 'prod-west-q8m4d-rg',
      ARM_RESOURCE_GROUP: 'prod-west-q8m4d-rg',
      LOCATION: 'eastus',
      ARM_CLOUD: 'AzurePublicCloud',
      NETWORK_PLUGIN: 'none',
      NETWORK_PLUGIN_MODE: '',
      NODE_IDENTITIES: expected.worker.managedIdentityID,
      AZURE_SUBSCRIPTION_ID: 'azure_subscription_id',
      AZURE_TENANT_ID: 'azure_tenant_id',
      AZURE_CLIENT_ID: 'azure_client_id',
      AZURE_CLIENT_SECRET: 'azure_client_secret',
    });
    expect(
      container.env
        .filter((e) => e.valueFrom?.secretKeyRef)
        .map((e) => e.valueFrom?.secretKeyRef?.name),
    ).toEqual(Array(4).fill('karpenter-cloud-credentials'));
    expect(
      h.cluster.kube.get(
        'cloudcredential.openshift.io/v1',
        'CredentialsRequest',
        'openshift-karpenter',
        'openshift-cloud-credential-operator',
      )?.spec,
    ).toMatchObject({
      secretRef: { name: 'karpenter-cloud-credentials', namespace: 'openshift-karpenter' },
      providerSpec: { kind: 'AzureProviderSpec' },
    });
  });

  it("refuses anyone but the sidecar changing the worker image or user data; puts them on a user's NodeClass", async () => {
    const alice = h.cluster.kube.as(sre);
    for (const [field, value] of [
      [
        'marketplaceImage',
        { publisher: 'canonical', offer: 'ubuntu', sku: '22_04', version: '1.0.0' },
      ],
      ['userData', 'not ignition'],
    ] as const) {
      expect(() =>
        alice.patch(AKS, 'AKSNodeClass', 'default', undefined, { spec: { [field]: value } }),
      ).toThrow(/karpenter-fleet-aksnodeclass-enforced-fields.*denied request/);
    }
    expect(
      h.cluster.kube.get(
        VAP,
        'ValidatingAdmissionPolicy',
        'karpenter-fleet-aksnodeclass-enforced-fields',
      ),
    ).toBeDefined();
    // Other fields stay the user's.
    alice.patch(AKS, 'AKSNodeClass', 'default', undefined, { spec: { maxPods: 110 } });

    // A NodeClass of their own gets the enforced fields (creating stays open), its own pool too.
    alice.create({
      apiVersion: AKS,
      kind: 'AKSNodeClass',
      metadata: { name: 'big-disk' },
      spec: { osDiskSizeGB: 512 },
    });
    const corrected = await until(() => {
      const spec = h.cluster.kube.get(AKS, 'AKSNodeClass', 'big-disk')?.spec as
        Record<string, unknown> | undefined;
      return spec?.marketplaceImage && spec.userData ? spec : undefined;
    }, 'the enforced fields on big-disk');
    expect(corrected).toEqual({
      imageFamily: 'Ubuntu',
      osDiskSizeGB: 512,
      marketplaceImage: expected.worker.image,
      userData: expected.userData.replace('/config/worker', '/config/karpenter-big-disk'),
    });
    await until(
      () =>
        h.cluster.kube.get(
          'machineconfiguration.openshift.io/v1',
          'MachineConfigPool',
          'karpenter-big-disk',
        ),
      'the MachineConfigPool of big-disk',
    );
  });

  it('disables: everything it wrote goes, and deploy/sidecar/azure refused it nothing on the way', async () => {
    await h.runtime.apply(h.order({ enabled: false }));
    await until(
      () =>
        h.runtime
          .lastResult()
          ?.result.conditions.find(
            (c) => c.type === 'Available' && c.reason === 'KarpenterDisabled',
          ),
      'Karpenter to be disabled',
      30_000,
    );
    await h.runtime.idle();
    expect(h.cluster.kube.get(AKS, 'AKSNodeClass', 'default')).toBeUndefined();
    expect(h.cluster.kube.get('karpenter.sh/v1', 'NodePool', 'general')).toBeUndefined();
    expect(
      h.cluster.kube.get('apps/v1', 'Deployment', 'karpenter', 'openshift-karpenter'),
    ).toBeUndefined();
    // Every request of the sidecar's life here was allowed by exactly what deploy/ grants.
    expect(h.cluster.sidecarAccess.used().length).toBeGreaterThan(20);
    expect({ refused: h.cluster.sidecarAccess.refused() }).toEqual({ refused: [] });
  });
});

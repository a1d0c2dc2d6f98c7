import { describe, expect, it } from '@jest/globals';
import {
  desiredState,
  azureFixtureInfrastructure,
  CRDS_DIR,
  loadCrdValidator,
} from '@fleet/testing';
import { InvalidDesiredStateError } from '../errors.js';
import type { KubeObject } from '../types.js';
import { AKS_NODE_CLASS_CRD_FILE, FORK_CRD_DIRECTORY } from './constants.js';
import { enforceAKSNodeClass, renderDefaultAKSNodeClass } from './nodeclass.js';
import { AzureStandaloneCloudProvider } from './provider.js';

const crd = loadCrdValidator(`${CRDS_DIR}karpenter/${AKS_NODE_CLASS_CRD_FILE}`, 'v1beta1');
const forkNodePools = loadCrdValidator(
  `${CRDS_DIR}${FORK_CRD_DIRECTORY}/karpenter.sh_nodepools.yaml`,
);

const expectValid = (object: unknown) => {
  const result = crd.validate(object);
  expect(result.errors).toEqual([]);
  expect(result.skippedRules.filter((r) => /tags|marketplaceImage/.test(r))).toEqual([]);
};

const poolPointer = (userData: string, nodeClass: string) =>
  userData.replace('/config/worker', `/config/karpenter-${nodeClass}`);

describe('default AKSNodeClass', () => {
  const infra = azureFixtureInfrastructure();

  it('has exactly the fields derived from the fixture cluster, and the fork CRD accepts it', () => {
    const nodeClass = renderDefaultAKSNodeClass(infra, {});
    expect(nodeClass).toEqual({
      apiVersion: 'karpenter.azure.com/v1beta1',
      kind: 'AKSNodeClass',
      metadata: { name: 'default', labels: { 'fleet.karpenter.sh/managed-by': 'karpenter-fleet' } },
      spec: {
        // Built from subscription, network resource group, vnet and subnet.
        vnetSubnetID:
          '/subscriptions/0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d/resourceGroups/prod-west-q8m4d-rg/providers/Microsoft.Network/virtualNetworks/prod-west-q8m4d-vnet/subnets/prod-west-q8m4d-worker-subnet',
        osDiskSizeGB: 128,
        marketplaceImage: {
          publisher: 'azureopenshift',
          offer: 'aro4',
          sku: 'aro_416',
          version: '416.94.20240701',
        },
        userData: poolPointer(infra.userData, 'default'),
        // The cluster's resource tags, then the MachineSet's.
        tags: { 'cost-center': '4411', team: 'platform' },
      },
    });
    expect(nodeClass.spec.userData).toContain('/config/karpenter-default');
    expectValid(nodeClass);
  });

  it("leaves out the tags karpenter-provider-azure sets itself, keeps OpenShift's own", () => {
    const nodeClass = renderDefaultAKSNodeClass(
      {
        ...infra,
        resourceTags: {
          'karpenter.azure.com_cluster': 'someone-else',
          'kubernetes.io_cluster.prod-west-q8m4d': 'owned',
        },
        worker: {
          ...infra.worker,
          tags: { 'karpenter.sh_nodepool': 'x', 'compute.aks.billing': 'y' },
        },
      },
      {},
    );
    expect(nodeClass.spec.tags).toEqual({ 'kubernetes.io_cluster.prod-west-q8m4d': 'owned' });
  });

  it("takes the SRE tags over the cluster ones; kubelet settings go to the pool's KubeletConfig, never to spec.kubelet", () => {
    const kubelet = {
      cpuCFSQuota: true,
      imageGCHighThresholdPercent: 85,
      imageGCLowThresholdPercent: 80,
    };
    const nodeClass = renderDefaultAKSNodeClass(infra, {
      tags: { team: 'payments', env: 'prod' },
      kubelet,
    });
    expect(nodeClass.spec.tags).toEqual({ 'cost-center': '4411', env: 'prod', team: 'payments' });
    // In OpenShift mode the fork ignores spec.kubelet but hashes it (its drift annotation): a
    // change would replace every Karpenter node while the MCO rolls the same nodes.
    expect(nodeClass.spec).not.toHaveProperty('kubelet');
    expectValid(nodeClass);
    const provider = new AzureStandaloneCloudProvider({ image: 'unused' });
    const config = provider
      .renderNodeClassConfig(infra, 'default', desiredState({ nodeClassOverrides: { kubelet } }))
      .map(({ object }) => object);
    expect(config.find((o) => o.kind === 'KubeletConfig')?.spec).toEqual(
      expect.objectContaining({ kubeletConfig: expect.objectContaining(kubelet) }),
    );
  });

  it('refuses restricted tag keys and the EC2NodeClass-only overrides, naming each', () => {
    let error: unknown;
    try {
      renderDefaultAKSNodeClass(infra, {
        tags: { 'karpenter.azure.com_cluster': 'x', '': 'y' },
        blockDeviceMappings: [{ deviceName: '/dev/xvda' }],
        metadataOptions: { httpTokens: 'required' },
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidDesiredStateError);
    expect((error as InvalidDesiredStateError).causes.map((c) => c.field)).toEqual([
      'nodeClassOverrides.tags[""]',
      'nodeClassOverrides.tags["karpenter.azure.com_cluster"]',
      'nodeClassOverrides.blockDeviceMappings',
      'nodeClassOverrides.metadataOptions',
    ]);
  });
});

describe('AKSNodeClass enforcement', () => {
  const infra = azureFixtureInfrastructure();
  const live = (name: string, spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name },
    spec,
  });

  it("puts the worker image and the NodeClass's own pool pointer on a user's NodeClass, leaving the rest", () => {
    const enforcement = enforceAKSNodeClass(
      live('gpu', {
        vnetSubnetID: infra.vnetSubnetID,
        osDiskSizeGB: 256,
        marketplaceImage: {
          publisher: 'canonical',
          offer: 'ubuntu',
          sku: '22_04',
          version: '1.0.0',
        },
      }),
      infra,
    );
    expect(enforcement.drifted).toEqual(['spec.marketplaceImage', 'spec.userData']);
    expect(enforcement.patch).toEqual({
      apiVersion: 'karpenter.azure.com/v1beta1',
      kind: 'AKSNodeClass',
      metadata: { name: 'gpu' },
      spec: {
        marketplaceImage: {
          offer: 'aro4',
          publisher: 'azureopenshift',
          sku: 'aro_416',
          version: '416.94.20240701',
        },
        userData: poolPointer(infra.userData, 'gpu'),
      },
    });
    expect(enforcement.mergePatch).toBeUndefined();
  });

  it('finds nothing to correct on the default NodeClass as rendered', () => {
    const rendered = renderDefaultAKSNodeClass(infra, {});
    expect(enforceAKSNodeClass(rendered, infra).drifted).toEqual([]);
  });

  it('takes kubelet settings off the AKSNodeClass even when they are desired: they reach the nodes through the KubeletConfig', () => {
    const kubelet = { cpuCFSQuota: false };
    const rendered = renderDefaultAKSNodeClass(infra, { kubelet });
    expect(enforceAKSNodeClass(rendered, infra).drifted).toEqual([]);
    const enforcement = enforceAKSNodeClass(live('default', { ...rendered.spec, kubelet }), infra);
    expect(enforcement.drifted).toEqual(['spec.kubelet']);
    expect(enforcement.mergePatch?.spec).toEqual({ kubelet: null });
  });

  it('takes away kubelet settings nobody desired, with a merge patch', () => {
    const enforcement = enforceAKSNodeClass(
      live('default', {
        ...renderDefaultAKSNodeClass(infra, {}).spec,
        kubelet: { cpuCFSQuota: false },
      }),
      infra,
    );
    expect(enforcement.drifted).toEqual(['spec.kubelet']);
    expect(enforcement.mergePatch?.spec).toEqual({ kubelet: null });
  });
});

describe('AKSNodeClass tag overrides', () => {
  it("refuses Karpenter's own tag keys in both the `/` and the `_` form: the fork maps `/` to `_` and its own tags win", () => {
    for (const key of [
      'karpenter.azure.com_cluster',
      'karpenter.azure.com/cluster',
      'karpenter.sh_nodepool',
      'karpenter.sh/nodepool',
      'compute.aks.billing',
    ]) {
      expect(() =>
        renderDefaultAKSNodeClass(azureFixtureInfrastructure(), { tags: { [key]: 'x' } }),
      ).toThrow(InvalidDesiredStateError);
    }
  });

  it('refuses two keys that become the same Azure tag once `/` is `_`', () => {
    expect(() =>
      renderDefaultAKSNodeClass(azureFixtureInfrastructure(), {
        tags: { 'team/name': 'a', team_name: 'b' },
      }),
    ).toThrow(/"team\/name" and "team_name" are the same Azure tag/);
  });
});

describe('Azure NodePools', () => {
  const provider = new AzureStandaloneCloudProvider({ image: 'unused' });
  const infra = azureFixtureInfrastructure();
  const requirementsOf = (objects: { object: KubeObject }[]) =>
    objects.map(
      ({ object }) =>
        (object as unknown as { spec: { template: { spec: { requirements: unknown[] } } } }).spec
          .template.spec.requirements,
    );

  it("gets the worker MachineSets' zones as `<location>-<zone>` when it says nothing of zones", () => {
    const pools = provider.renderNodePools(
      desiredState({
        nodePools: [
          {
            name: 'general',
            spec: {
              template: {
                spec: {
                  requirements: [
                    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
                  ],
                },
              },
            },
          },
          {
            name: 'pinned',
            spec: {
              template: {
                spec: {
                  requirements: [
                    { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['eastus-2'] },
                  ],
                },
              },
            },
          },
        ],
      }),
      infra,
    );
    const image = [
      { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
      {
        key: 'node.kubernetes.io/instance-type',
        operator: 'NotIn',
        values: ['Standard_A4_v2', 'Standard_NC6'],
      },
    ];
    expect(requirementsOf(pools)).toEqual([
      [
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        {
          key: 'topology.kubernetes.io/zone',
          operator: 'In',
          values: ['eastus-1', 'eastus-2', 'eastus-3'],
        },
        ...image,
      ],
      [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['eastus-2'] }, ...image],
    ]);
    expect(
      (pools[0]!.object as unknown as { spec: { template: { spec: { nodeClassRef: unknown } } } })
        .spec.template.spec.nodeClassRef,
    ).toEqual({ group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' });
  });

  it('can only choose sizes that boot the worker image: its architecture, and not the sizes of the other Hyper-V generation', () => {
    const pools = provider.renderNodePools(
      desiredState({
        nodePools: [{ name: 'general', spec: { template: { spec: { requirements: [] } } } }],
      }),
      { ...infra, zones: [] },
    );
    expect(requirementsOf(pools)).toEqual([
      [
        { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
        {
          key: 'node.kubernetes.io/instance-type',
          operator: 'NotIn',
          values: ['Standard_A4_v2', 'Standard_NC6'],
        },
      ],
    ]);
    // The fork's own NodePool CRD accepts them.
    for (const { object } of pools) expect(forkNodePools.validate(object).errors).toEqual([]);
  });

  it("cannot require karpenter.azure.com/sku-hyperv-generation: the fork's NodePool CRD reserves it", () => {
    const [pool] = provider.renderNodePools(
      desiredState({
        nodePools: [{ name: 'general', spec: { template: { spec: { requirements: [] } } } }],
      }),
      { ...infra, zones: [] },
    );
    const withLabel = structuredClone(pool!.object) as unknown as {
      spec: { template: { spec: { requirements: unknown[] } } };
    };
    withLabel.spec.template.spec.requirements = [
      { key: 'karpenter.azure.com/sku-hyperv-generation', operator: 'In', values: ['2'] },
    ];
    expect(forkNodePools.validate(withLabel).errors).toEqual([
      expect.stringContaining('label domain "karpenter.azure.com" is restricted'),
    ]);
  });

  it('gets no zone requirement where the workers are not zonal', () => {
    const pools = provider.renderNodePools(
      desiredState({
        nodePools: [{ name: 'general', spec: { template: { spec: { requirements: [] } } } }],
      }),
      { ...infra, zones: [] },
    );
    expect(requirementsOf(pools)[0]).not.toContainEqual(
      expect.objectContaining({ key: 'topology.kubernetes.io/zone' }),
    );
  });
});

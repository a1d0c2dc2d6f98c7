import { describe, expect, it } from '@jest/globals';
import { InMemoryClusterObjectReader } from '@fleet/discovery';
import { azureFixtureInfrastructure } from '@fleet/testing';
import { AZURE_STANDALONE_DRIVER } from './driver.js';
import {
  parseAzureProviderID,
  verifyAzureNodeIdentity,
  type AzureVmIdentity,
} from './node-identity.js';

const SUB = '0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d';
const cluster = {
  subscriptionID: SUB,
  resourceGroup: 'prod-west-q8m4d-rg',
  clusterName: 'prod-west-q8m4d',
};
const pid = (name: string, rg = 'prod-west-q8m4d-rg', sub = SUB) =>
  `azure:///subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachines/${name}`;

const vm = (name: string, extra: Partial<AzureVmIdentity> = {}): AzureVmIdentity => ({
  id: `/subscriptions/${SUB}/resourceGroups/PROD-WEST-Q8M4D-RG/providers/Microsoft.Compute/virtualMachines/${name}`,
  name,
  computerName: name,
  powerState: 'running',
  privateIpAddresses: ['10.0.2.4'],
  // What karpenter-provider-azure writes on every VM it launches.
  tags: {
    'karpenter.azure.com_cluster': 'prod-west-q8m4d',
    'karpenter.sh_nodepool': 'general',
    'compute.aks.billing': 'linux',
  },
  ...extra,
});

describe('Azure node identity', () => {
  it('parses VM providerIDs only', () => {
    expect(parseAzureProviderID(pid('aks-a'))).toEqual({
      subscriptionID: SUB,
      resourceGroup: 'prod-west-q8m4d-rg',
      name: 'aks-a',
    });
    for (const bad of [
      'aws:///us-east-1a/i-0abc',
      `azure:///subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/ss/virtualMachines/0`,
      '',
    ])
      expect(parseAzureProviderID(bad)).toBeUndefined();
  });

  it('verifies a running VM whose computer name is the node name, case-insensitively where Azure is', async () => {
    const looked: string[] = [];
    const verdicts = await verifyAzureNodeIdentity(
      [
        { nodeName: 'aks-a', providerID: pid('aks-a', 'prod-west-q8m4d-rg'.toLowerCase()) },
        { nodeName: 'aks-a', providerID: pid('aks-a', 'PROD-WEST-Q8M4D-RG') },
      ],
      cluster,
      (rg, name) => {
        looked.push(`${rg}/${name}`);
        return Promise.resolve(vm(name));
      },
    );
    expect(verdicts.map((v) => v.verified)).toEqual([true, true]);
    expect(verdicts[0]).toMatchObject({
      addresses: { dnsNames: ['aks-a'], ipAddresses: ['10.0.2.4'] },
    });
    // One lookup per VM.
    expect(looked).toEqual(['prod-west-q8m4d-rg/aks-a']);
  });

  it('refuses, with a reason each, what cannot be the node', async () => {
    const vms: Record<string, AzureVmIdentity> = {
      stopped: vm('stopped', { powerState: 'deallocated' }),
      renamed: vm('renamed', { computerName: 'something-else' }),
      untagged: vm('untagged', { tags: { 'karpenter.sh_nodepool': 'general' } }),
      theirs: vm('theirs', {
        tags: { 'karpenter.azure.com_cluster': 'prod-east-x7k2p', 'compute.aks.billing': 'linux' },
      }),
      // Another cluster's stopped VM is refused as not this cluster's, before its state is told.
      theirsStopped: vm('theirsStopped', {
        powerState: 'deallocated',
        tags: { 'karpenter.azure.com_cluster': 'prod-east-x7k2p' },
      }),
    };
    const verdicts = await verifyAzureNodeIdentity(
      [
        { nodeName: 'gone', providerID: pid('gone') },
        { nodeName: 'stopped', providerID: pid('stopped') },
        { nodeName: 'renamed', providerID: pid('renamed') },
        { nodeName: 'elsewhere', providerID: pid('elsewhere', 'another-rg') },
        { nodeName: 'other-sub', providerID: pid('other-sub', 'prod-west-q8m4d-rg', 'ffff') },
        { nodeName: 'broken', providerID: pid('broken') },
        { nodeName: 'untagged', providerID: pid('untagged') },
        { nodeName: 'theirs', providerID: pid('theirs') },
        { nodeName: 'theirsStopped', providerID: pid('theirsStopped') },
      ],
      cluster,
      (_rg, name) =>
        name === 'broken' ? Promise.reject(new Error('ARM said 500')) : Promise.resolve(vms[name]),
    );
    expect(verdicts.map((v) => (v.verified ? 'verified' : `${v.reason}: ${v.message}`))).toEqual([
      'InstanceNotFound: Azure VM gone does not exist in resource group prod-west-q8m4d-rg',
      'InstanceNotRunning: Azure VM stopped is deallocated',
      'NodeNameMismatch: Azure VM renamed has computer name "something-else", not node name "renamed"',
      `InvalidProviderID: providerID "${pid('elsewhere', 'another-rg')}" names a VM outside the cluster's resource group prod-west-q8m4d-rg of subscription ${SUB}`,
      `InvalidProviderID: providerID "${pid('other-sub', 'prod-west-q8m4d-rg', 'ffff')}" names a VM outside the cluster's resource group prod-west-q8m4d-rg of subscription ${SUB}`,
      'CloudLookupFailed: reading Azure VM broken failed: ARM said 500',
      "InstanceNotInCluster: Azure VM untagged has no karpenter.azure.com_cluster tag; the cluster's VMs carry karpenter.azure.com_cluster=prod-west-q8m4d",
      'InstanceNotInCluster: Azure VM theirs has tag karpenter.azure.com_cluster=prod-east-x7k2p, not prod-west-q8m4d',
      'InstanceNotInCluster: Azure VM theirsStopped has tag karpenter.azure.com_cluster=prod-east-x7k2p, not prod-west-q8m4d',
    ]);
  });

  it('reads the cluster tag by a case-insensitive name, as ARM does, and its value exactly', async () => {
    const verdicts = await verifyAzureNodeIdentity(
      [
        { nodeName: 'upper', providerID: pid('upper') },
        { nodeName: 'shouting', providerID: pid('shouting') },
      ],
      cluster,
      (_rg, name) =>
        Promise.resolve(
          name === 'upper'
            ? vm(name, { tags: { 'Karpenter.Azure.Com_Cluster': 'prod-west-q8m4d' } })
            : vm(name, { tags: { 'karpenter.azure.com_cluster': 'PROD-WEST-Q8M4D' } }),
        ),
    );
    expect(verdicts.map((v) => (v.verified ? 'verified' : v.reason))).toEqual([
      'verified',
      'InstanceNotInCluster',
    ]);
  });
});

describe('Azure driver', () => {
  it('refuses to render without the operand image (OperandImageNotSet), and renders with one', async () => {
    const reader = () => new InMemoryClusterObjectReader([]);
    const infra = azureFixtureInfrastructure();
    const without = AZURE_STANDALONE_DRIVER.create({ reader, env: {} });
    expect(await without.prepare?.(infra, {} as never)).toMatchObject({
      ok: false,
      reason: 'OperandImageNotSet',
    });
    const image = `quay.io/example/azure-karpenter-provider@sha256:${'2'.repeat(64)}`;
    const withImage = AZURE_STANDALONE_DRIVER.create({
      reader,
      env: { AZURE_KARPENTER_IMAGE: image },
    });
    expect(await withImage.prepare?.(infra, {} as never)).toEqual({ ok: true, infra });
  });
});

// The standalone OpenShift-on-Azure fixture cluster (test/fixtures/clusters/ocp-azure-standalone):
// its objects, and what discovery yields for it once its workers boot a marketplace image.
import type { AzureStandaloneInfrastructure } from '@fleet/discovery';
import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import type { ArmWorld } from './arm/arm-emulator.js';
import { fixtureClusterDir } from './fixtures.js';

export const OCP_AZURE_STANDALONE = pathToFileURL(`${fixtureClusterDir('ocp-azure-standalone')}/`);

export function azureFixtureObject<T = Record<string, unknown>>(file: string): T {
  return parse(readFileSync(new URL(file, OCP_AZURE_STANDALONE), 'utf8')) as T;
}

/** Every Kubernetes object in the fixture directory. */
export function azureFixtureObjects(): Record<string, unknown>[] {
  return readdirSync(OCP_AZURE_STANDALONE)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => azureFixtureObject(f));
}

export function azureFixtureArmWorld(): ArmWorld {
  return JSON.parse(
    readFileSync(new URL('arm-world.json', OCP_AZURE_STANDALONE), 'utf8'),
  ) as ArmWorld;
}

/** A no-plan marketplace image (ARO's), the kind the OpenShift fork of karpenter-provider-azure boots. */
export const ARO_MARKETPLACE_IMAGE = {
  publisher: 'azureopenshift',
  offer: 'aro4',
  sku: 'aro_416',
  version: '416.94.20240701',
} as const;

interface AzureMachineSetObject {
  kind: string;
  spec: { template: { spec: { providerSpec: { value: { image: Record<string, string> } } } } };
}

/** The fixture's objects with every MachineSet booting `image` instead of the gallery image. */
export function withWorkerImage(
  objects: Record<string, unknown>[],
  image: Record<string, string>,
): Record<string, unknown>[] {
  return objects.map((object) => {
    if (object.kind !== 'MachineSet') return object;
    const copy = structuredClone(object) as unknown as AzureMachineSetObject;
    copy.spec.template.spec.providerSpec.value.image = { ...image };
    return copy as unknown as Record<string, unknown>;
  });
}

/**
 * The supported variant of the fixture cluster: every MachineSet boots ARO's no-plan
 * marketplace image (ARO_MARKETPLACE_IMAGE, in arm-world.json) instead of the installer's
 * gallery image, as a cluster installed with `platform.azure.defaultMachinePlatform.osImage` does.
 */
export function azureMarketplaceFixtureObjects(): Record<string, unknown>[] {
  return withWorkerImage(azureFixtureObjects(), {
    ...ARO_MARKETPLACE_IMAGE,
    resourceID: '',
    type: 'MarketplaceNoPlan',
  });
}

/**
 * The fixture's objects plus an OpenShift Cluster Autoscaler as an admin sets one up: the
 * ClusterAutoscaler `default` and a MachineAutoscaler for each worker MachineSet (the infra pool
 * has none), with the kinds and shapes of the AWS fixture (autoscaling.openshift.io).
 */
export function withClusterAutoscaler(
  objects: Record<string, unknown>[],
): Record<string, unknown>[] {
  const workers = objects
    .filter((o) => o.kind === 'MachineSet')
    .map((o) => (o.metadata as { name: string }).name)
    .filter((name) => name.includes('-worker-'));
  return [
    ...objects,
    {
      apiVersion: 'autoscaling.openshift.io/v1',
      kind: 'ClusterAutoscaler',
      metadata: { name: 'default' },
      spec: {
        podPriorityThreshold: -10,
        resourceLimits: {
          maxNodesTotal: 48,
          cores: { min: 8, max: 192 },
          memory: { min: 4, max: 768 },
        },
        scaleDown: {
          enabled: true,
          delayAfterAdd: '10m',
          delayAfterDelete: '5m',
          delayAfterFailure: '30s',
          unneededTime: '5m',
        },
      },
    },
    ...workers.map((machineSet, i) => ({
      apiVersion: 'autoscaling.openshift.io/v1beta1',
      kind: 'MachineAutoscaler',
      metadata: {
        name: machineSet.replace(/^.*-worker-/, 'worker-'),
        namespace: 'openshift-machine-api',
      },
      spec: {
        minReplicas: 1,
        maxReplicas: 8 + i,
        scaleTargetRef: {
          apiVersion: 'machine.openshift.io/v1beta1',
          kind: 'MachineSet',
          name: machineSet,
        },
      },
    })),
  ];
}

const SUBSCRIPTION = '0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d';

/** What discovery yields for the fixture once its workers boot ARO_MARKETPLACE_IMAGE. */
export function azureFixtureInfrastructure(): AzureStandaloneInfrastructure {
  return {
    platform: 'AZURE',
    infraID: 'prod-west-q8m4d',
    apiServerInternalURI: 'https://api-int.prod-west.example.com:6443',
    controlPlaneTopology: 'HighlyAvailable',
    resourceGroup: 'prod-west-q8m4d-rg',
    networkResourceGroup: 'prod-west-q8m4d-rg',
    cloudName: 'AzurePublicCloud',
    resourceTags: { 'cost-center': '4411', team: 'platform' },
    credentials: {
      secret: { namespace: 'openshift-machine-api', name: 'azure-cloud-credentials' },
      subscriptionID: SUBSCRIPTION,
      tenantID: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      clientID: '5f0c1d2e-8a3b-4c6d-9e7f-0a1b2c3d4e5f',
      authentication: 'ClientSecret',
      resourceGroup: 'prod-west-q8m4d-rg',
      region: 'eastus',
    },
    worker: {
      name: 'prod-west-q8m4d-worker-eastus1',
      vmSize: 'Standard_D4s_v3',
      location: 'eastus',
      image: { ...ARO_MARKETPLACE_IMAGE },
      osDiskSizeGB: 128,
      vnet: 'prod-west-q8m4d-vnet',
      subnet: 'prod-west-q8m4d-worker-subnet',
      networkResourceGroup: 'prod-west-q8m4d-rg',
      resourceGroup: 'prod-west-q8m4d-rg',
      managedIdentityID: `/subscriptions/${SUBSCRIPTION}/resourcegroups/prod-west-q8m4d-rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/prod-west-q8m4d-identity`,
      tags: { 'cost-center': '4411' },
      zone: '1',
      userDataSecretName: 'worker-user-data',
    },
    workerSelection: {
      chosen: 'prod-west-q8m4d-worker-eastus1',
      passedOver: [{ name: 'prod-west-q8m4d-infra-eastus1', why: 'role infra' }],
    },
    vnetSubnetID: `/subscriptions/${SUBSCRIPTION}/resourceGroups/prod-west-q8m4d-rg/providers/Microsoft.Network/virtualNetworks/prod-west-q8m4d-vnet/subnets/prod-west-q8m4d-worker-subnet`,
    zones: ['eastus-1', 'eastus-2', 'eastus-3'],
    userData: azureFixtureObject<{ stringData: { userData: string } }>(
      'secret-worker-user-data.yaml',
    ).stringData.userData,
    // ARO's image is x64 Gen2; arm-world.json's Gen1-only sizes in eastus.
    imageRequirements: {
      architecture: 'amd64',
      hyperVGeneration: 'V2',
      unbootableVmSizes: ['Standard_A4_v2', 'Standard_NC6'],
    },
    // arm-world.json's worker subnet has a NAT gateway.
    egress: { type: 'NATGateway', natGateway: 'prod-west-q8m4d-natgw' },
  };
}

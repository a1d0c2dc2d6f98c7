import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

import {
  ArmEmulator,
  ARO_MARKETPLACE_IMAGE,
  azureFixtureArmWorld,
  azureFixtureInfrastructure,
  azureFixtureObjects,
  CRDS_DIR,
  KubeApiServerEmulator,
  OCP_AZURE_STANDALONE,
  withWorkerImage,
  type ArmWorld,
} from '@fleet/testing';
import {
  InMemoryClusterObjectReader,
  KubeClusterObjectReader,
  type ClusterObjectReader,
} from '../cluster-reader.js';
import { ArmResourceReader } from './arm.js';
import type { DiscoveryResult } from '../types.js';
import { discoverAzureStandalone } from './standalone.js';
import type { AzureStandaloneInfrastructure } from './types.js';

type KubeObject = Record<string, unknown> & {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  stringData?: Record<string, string>;
  status?: {
    platform?: string;
    platformStatus?: { type?: string; azure?: Record<string, unknown> };
  };
};
type ProviderSpec = Record<string, unknown> & { image: Record<string, string> };

const GALLERY_IMAGE =
  '/resourceGroups/prod-west-q8m4d-rg/providers/Microsoft.Compute/galleries/gallery_prod_west_q8m4d/images/prod-west-q8m4d-gen2/versions/latest';
const WORKERS = ['1', '2', '3'].map((z) => `prod-west-q8m4d-worker-eastus${z}`);

/** The fixture with a marketplace image on its workers, `edit` applied to a copy. */
function cluster(
  edit: (objects: KubeObject[]) => KubeObject[] = (o) => o,
  image: Record<string, string> = ARO_MARKETPLACE_IMAGE,
) {
  return new InMemoryClusterObjectReader(edit(withWorkerImage(azureFixtureObjects(), image)));
}

const providerSpecOf = (o: KubeObject) =>
  (o as { spec: { template: { spec: { providerSpec: { value: ProviderSpec } } } } }).spec.template
    .spec.providerSpec.value;

/** Edits the providerSpec of the named MachineSets (all workers when none is named). */
const editWorkers =
  (edit: (spec: ProviderSpec) => void, names: string[] = WORKERS) =>
  (objects: KubeObject[]) => {
    for (const o of objects) {
      if (o.kind === 'MachineSet' && names.includes(o.metadata?.name ?? ''))
        edit(providerSpecOf(o));
    }
    return objects;
  };

const editSecret =
  (name: string, edit: (data: Record<string, string>) => void) => (objects: KubeObject[]) => {
    for (const o of objects)
      if (o.kind === 'Secret' && o.metadata?.name === name) edit(o.stringData!);
    return objects;
  };

function failure(result: DiscoveryResult<AzureStandaloneInfrastructure>) {
  if (result.ok) throw new Error('expected discovery to fail');
  return { reason: result.reason, message: result.message };
}

function infrastructure(result: DiscoveryResult<AzureStandaloneInfrastructure>) {
  if (!result.ok)
    throw new Error(`expected discovery to succeed: ${result.reason}: ${result.message}`);
  return result.infrastructure;
}

// One ARM emulator for the file: the real @azure/arm-* clients reach it over HTTPS.
const arm = new ArmEmulator(azureFixtureArmWorld());
beforeAll(() => arm.start());
afterAll(() => arm.stop());
beforeEach(() => arm.seed(azureFixtureArmWorld()));

const discover = (reader: ClusterObjectReader) =>
  discoverAzureStandalone({
    reader,
    arm: (subscriptionID) =>
      new ArmResourceReader(arm.credential(), subscriptionID, arm.clientOptions()),
  });

describe('discoverAzureStandalone', () => {
  it('refuses the cluster as installed: its workers boot the gallery image, which the fork cannot', async () => {
    const result = failure(await discover(new InMemoryClusterObjectReader(azureFixtureObjects())));
    expect(result.reason).toBe('ImageNotSupported');
    expect(result.message).toContain(
      `MachineSet openshift-machine-api/prod-west-q8m4d-worker-eastus1 boots from the image ${GALLERY_IMAGE} given by spec.template.spec.providerSpec.value.image.resourceID`,
    );
    expect(result.message).toContain('marketplaceImage {publisher, offer, sku, version}');
    expect(result.message).toContain('publisher azureopenshift, offer aro4');
    // Every worker set was tried, and each says why not.
    expect(result.message).toContain(
      'no other worker MachineSet could be used: prod-west-q8m4d-worker-eastus2 (ImageNotSupported:',
    );
  });

  it('discovers a cluster whose workers boot a no-plan marketplace image completely', async () => {
    const result = await discover(cluster());
    expect(result).toEqual({
      ok: true,
      infrastructure: azureFixtureInfrastructure(),
      conditions: [
        {
          type: 'WorkerMachineSetSelected',
          status: 'True',
          reason: 'OthersPassedOver',
          message:
            'the default AKSNodeClass is copied from MachineSet openshift-machine-api/prod-west-q8m4d-worker-eastus1; passed over: prod-west-q8m4d-infra-eastus1 (role infra)',
        },
      ],
    });
  });

  it('refuses a marketplace image with a purchase plan, and one missing a part', async () => {
    const withPlan = failure(
      await discover(cluster(undefined, { ...ARO_MARKETPLACE_IMAGE, type: 'MarketplaceWithPlan' })),
    );
    expect(withPlan.reason).toBe('ImageNotSupported');
    expect(withPlan.message).toContain(
      'boots from the marketplace image azureopenshift:aro4:aro_416:416.94.20240701, which needs a purchase plan (spec.template.spec.providerSpec.value.image.type MarketplaceWithPlan)',
    );

    const { version: _version, ...noVersion } = ARO_MARKETPLACE_IMAGE;
    const partial = failure(await discover(cluster(undefined, noVersion)));
    expect(partial).toMatchObject({ reason: 'InvalidWorkerMachineSet' });
    expect(partial.message).toContain(
      'spec.template.spec.providerSpec.value.image: a marketplace image needs spec.template.spec.providerSpec.value.image.version',
    );
  });

  it('uses a later worker set when the first cannot be used, and says why', async () => {
    const found = infrastructure(
      await discover(
        cluster(editWorkers((spec) => (spec.image = { resourceID: GALLERY_IMAGE }), [WORKERS[0]!])),
      ),
    );
    expect(found.worker.name).toBe(WORKERS[1]);
    expect(found.workerSelection.passedOver.map((p) => p.name)).toEqual([
      'prod-west-q8m4d-infra-eastus1',
      WORKERS[0],
    ]);
    expect(found.workerSelection.passedOver[1]!.why).toMatch(/^ImageNotSupported: /);
    // Zones still cover every general-purpose worker set.
    expect(found.zones).toEqual(['eastus-1', 'eastus-2', 'eastus-3']);
  });

  it('passes over GPU and Windows worker sets', async () => {
    const found = infrastructure(
      await discover(
        cluster((objects) => {
          editWorkers((spec) => (spec.vmSize = 'Standard_NC6s_v3'), [WORKERS[0]!])(objects);
          editWorkers(
            (spec) => ((spec.osDisk as Record<string, unknown>).osType = 'Windows'),
            [WORKERS[1]!],
          )(objects);
          return objects;
        }),
      ),
    );
    expect(found.worker.name).toBe(WORKERS[2]);
    expect(found.workerSelection.passedOver).toEqual([
      { name: 'prod-west-q8m4d-infra-eastus1', why: 'role infra' },
      { name: WORKERS[0], why: 'GPU nodes (VM size Standard_NC6s_v3)' },
      {
        name: WORKERS[1],
        why: `InvalidWorkerMachineSet: MachineSet openshift-machine-api/${WORKERS[1]}: spec.template.spec.providerSpec.value.osDisk.osType: Windows; Karpenter's nodes run RHCOS`,
      },
    ]);
  });

  it("fills what the MachineSet leaves empty as machine-api-provider-azure does: resource groups and location from the credentials, the identity's full ARM ID", async () => {
    const found = infrastructure(
      await discover(
        cluster(
          editWorkers((spec) => {
            spec.networkResourceGroup = '';
            delete spec.resourceGroup;
            delete spec.location;
            spec.managedIdentity = '';
          }),
        ),
      ),
    );
    expect(found.worker).toMatchObject({
      location: 'eastus',
      resourceGroup: 'prod-west-q8m4d-rg',
      networkResourceGroup: 'prod-west-q8m4d-rg',
    });
    expect(found.worker.managedIdentityID).toBeUndefined();
    expect(found.zones).toEqual(['eastus-1', 'eastus-2', 'eastus-3']);

    // An identity in a resource group of its own, and a network in another: both exist in ARM.
    const fullID =
      '/subscriptions/0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d/resourceGroups/identities/providers/Microsoft.ManagedIdentity/userAssignedIdentities/workers';
    const world = azureFixtureArmWorld();
    arm.seed({
      ...world,
      resourceGroups: [...world.resourceGroups, 'identities', 'shared-network-rg'],
      virtualNetworks: [{ resourceGroup: 'shared-network-rg', name: 'prod-west-q8m4d-vnet' }],
      subnets: world.subnets.map((s) => ({ ...s, resourceGroup: 'shared-network-rg' })),
      userAssignedIdentities: [
        { ...world.userAssignedIdentities[0]!, resourceGroup: 'identities', name: 'workers' },
      ],
    });
    const kept = infrastructure(
      await discover(
        cluster(
          editWorkers((spec) => {
            spec.managedIdentity = fullID;
            spec.networkResourceGroup = 'shared-network-rg';
          }),
        ),
      ),
    );
    expect(kept.worker.managedIdentityID).toBe(fullID);
    expect(kept.vnetSubnetID).toBe(
      '/subscriptions/0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d/resourceGroups/shared-network-rg/providers/Microsoft.Network/virtualNetworks/prod-west-q8m4d-vnet/subnets/prod-west-q8m4d-worker-subnet',
    );
  });

  it('has no zones where the workers are not zonal', async () => {
    const found = infrastructure(await discover(cluster(editWorkers((spec) => delete spec.zone))));
    expect(found.zones).toEqual([]);
    expect(found.worker.zone).toBeUndefined();
  });

  it('names each missing credential and tells a workload identity from a client secret', async () => {
    const noSecret = failure(
      await discover(
        cluster((objects) => objects.filter((o) => o.metadata?.name !== 'azure-cloud-credentials')),
      ),
    );
    expect(noSecret).toEqual({
      reason: 'CloudCredentialsSecretNotFound',
      message: `Secret openshift-machine-api/azure-cloud-credentials (credentialsSecret of MachineSet ${WORKERS[0]}) not found`,
    });

    const noKeys = failure(
      await discover(
        cluster(
          editSecret('azure-cloud-credentials', (data) => {
            delete data.azure_tenant_id;
            delete data.azure_client_secret;
          }),
        ),
      ),
    );
    expect(noKeys).toEqual({
      reason: 'InvalidCloudCredential',
      message:
        'Secret openshift-machine-api/azure-cloud-credentials: no azure_tenant_id, azure_client_secret or azure_federated_token_file; the operand authenticates with these keys',
    });

    const federated = infrastructure(
      await discover(
        cluster(
          editSecret('azure-cloud-credentials', (data) => {
            delete data.azure_client_secret;
            data.azure_federated_token_file = '/var/run/secrets/openshift/serviceaccount/token';
          }),
        ),
      ),
    );
    expect(federated.credentials.authentication).toBe('FederatedToken');
  });

  it('refuses an Infrastructure of another platform or without its resource group, naming the field', async () => {
    const onAws = failure(
      await discover(
        cluster((objects) =>
          objects.map((o) =>
            o.kind === 'Infrastructure'
              ? { ...o, status: { ...o.status, platform: 'AWS', platformStatus: { type: 'AWS' } } }
              : o,
          ),
        ),
      ),
    );
    expect(onAws).toEqual({
      reason: 'UnsupportedPlatform',
      message: 'Infrastructure cluster reports platform AWS; Azure discovery needs platform Azure',
    });

    const noGroup = failure(
      await discover(
        cluster((objects) => {
          for (const o of objects) {
            if (o.kind === 'Infrastructure')
              delete o.status!.platformStatus!.azure!.resourceGroupName;
          }
          return objects;
        }),
      ),
    );
    expect(noGroup.reason).toBe('InvalidInfrastructure');
    expect(noGroup.message).toContain('status.platformStatus.azure.resourceGroupName');
  });

  it('refuses a cloud the fork does not know (only Public, China and US Government), before any operand runs', async () => {
    const onCloud = (cloudName: string) =>
      discover(
        cluster((objects) => {
          for (const o of objects) {
            if (o.kind === 'Infrastructure') o.status!.platformStatus!.azure!.cloudName = cloudName;
          }
          return objects;
        }),
      );
    for (const cloudName of ['AzureGermanCloud', 'AzureStackCloud']) {
      expect(failure(await onCloud(cloudName))).toEqual({
        reason: 'CloudNotSupported',
        message: `Infrastructure cluster: status.platformStatus.azure.cloudName ${cloudName} is not a cloud the OpenShift fork of karpenter-provider-azure knows (AzurePublicCloud, AzureChinaCloud, AzureUSGovernmentCloud); its controller would exit at start with "unknown cloud name"`,
      });
    }
    for (const cloudName of ['AzurePublicCloud', 'AzureUSGovernmentCloud', 'AzureChinaCloud']) {
      expect(infrastructure(await onCloud(cloudName)).cloudName).toBe(cloudName);
    }
  });

  it('says so when no worker MachineSet is left', async () => {
    const result = failure(
      await discover(
        cluster((objects) =>
          objects.filter((o) => o.kind !== 'MachineSet' || o.metadata?.name?.includes('infra')),
        ),
      ),
    );
    expect(result).toEqual({
      reason: 'NoWorkerMachineSet',
      message:
        'no MachineSet in openshift-machine-api is labelled machine.openshift.io/cluster-api-machine-role=worker for general-purpose nodes; passed over: prod-west-q8m4d-infra-eastus1 (role infra)',
    });
  });
});

describe('discoverAzureStandalone asks Azure Resource Manager', () => {
  it('reads the subnet, the identity and the image through the real clients, resolving latest', async () => {
    const found = infrastructure(
      await discover(cluster(undefined, { ...ARO_MARKETPLACE_IMAGE, version: 'latest' })),
    );
    expect(found.worker.image.version).toBe('latest');
    const paths = arm.requests.filter((r) => r.status === 200).map((r) => r.path.toLowerCase());
    expect(paths).toEqual([
      '/subscriptions/0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d/resourcegroups/prod-west-q8m4d-rg/providers/microsoft.network/virtualnetworks/prod-west-q8m4d-vnet/subnets/prod-west-q8m4d-worker-subnet',
      '/subscriptions/0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d/resourcegroups/prod-west-q8m4d-rg/providers/microsoft.managedidentity/userassignedidentities/prod-west-q8m4d-identity',
      '/subscriptions/0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d/providers/microsoft.compute/locations/eastus/publishers/azureopenshift/artifacttypes/vmimage/offers/aro4/skus/aro_416/versions',
      '/subscriptions/0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d/providers/microsoft.compute/locations/eastus/publishers/azureopenshift/artifacttypes/vmimage/offers/aro4/skus/aro_416/versions/416.94.20240701',
      '/subscriptions/0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d/providers/microsoft.compute/skus',
    ]);
    expect(arm.requests.every((r) => r.apiVersion !== null)).toBe(true);
  });

  it("reads what the image can boot: ARM's architecture and Hyper-V generation, and the location's sizes that cannot", async () => {
    const gen2 = infrastructure(await discover(cluster()));
    // The fixture's eastus sizes: A4_v2 and NC6 are Gen1-only; D4ps_v5 is Arm64 (the
    // architecture requirement keeps it out); M416ms_v2 is Gen2-only.
    expect(gen2.imageRequirements).toEqual({
      architecture: 'amd64',
      hyperVGeneration: 'V2',
      unbootableVmSizes: ['Standard_A4_v2', 'Standard_NC6'],
    });
    expect(
      arm.requests.some(
        (r) =>
          r.path.toLowerCase().endsWith('/providers/microsoft.compute/skus') && r.status === 200,
      ),
    ).toBe(true);

    const world = azureFixtureArmWorld();
    arm.seed({
      ...world,
      images: world.images.map((i) => ({ ...i, hyperVGeneration: 'V1' as const })),
    });
    const gen1 = infrastructure(await discover(cluster()));
    expect(gen1.imageRequirements).toEqual({
      architecture: 'amd64',
      hyperVGeneration: 'V1',
      unbootableVmSizes: ['Standard_M416ms_v2'],
    });

    arm.seed({
      ...world,
      images: world.images.map((i) => ({ ...i, architecture: 'Arm64' as const })),
    });
    const arm64 = infrastructure(await discover(cluster()));
    expect(arm64.imageRequirements).toEqual({
      architecture: 'arm64',
      hyperVGeneration: 'V2',
      unbootableVmSizes: [],
    });
  });

  it("refuses a private worker subnet whose only egress is the cluster's load balancer, which the fork never joins Karpenter's NICs to", async () => {
    const world = azureFixtureArmWorld();
    const worker = (edit: (s: ArmWorld['subnets'][number]) => void) => ({
      ...world,
      subnets: world.subnets.map((s) => {
        const copy = { ...s };
        if (s.name.includes('worker')) edit(copy);
        return copy;
      }),
    });
    // OpenShift's default outboundType LoadBalancer on a private subnet (defaultOutboundAccess
    // false, the default for virtual networks created since Azure retired default outbound
    // access): no NAT gateway, no route to an appliance.
    arm.seed(
      worker((s) => {
        delete s.natGateway;
        delete s.routeTable;
        s.defaultOutboundAccess = false;
      }),
    );
    expect(failure(await discover(cluster()))).toEqual({
      reason: 'NoOutboundConnectivity',
      message:
        'subnet prod-west-q8m4d-worker-subnet of virtual network prod-west-q8m4d-vnet in resource group prod-west-q8m4d-rg is private (defaultOutboundAccess false) and has no NAT gateway and no route table sending 0.0.0.0/0 to a virtual appliance or gateway: its workers reach the internet through the outbound rule of load balancer prod-west-q8m4d, whose backend pool the OpenShift fork of karpenter-provider-azure never adds its NICs to (it joins only load balancers named kubernetes and kubernetes-internal), so Karpenter nodes would have no egress and never pull their images. Attach a NAT gateway to the subnet, or route 0.0.0.0/0 to a firewall (outboundType UserDefinedRouting)',
    });
    // A route table sending the default route to a firewall: user-defined routing works.
    arm.seed({
      ...worker((s) => {
        delete s.natGateway;
        s.routeTable = 'prod-west-q8m4d-udr';
      }),
      routeTables: [
        {
          resourceGroup: 'prod-west-q8m4d-rg',
          name: 'prod-west-q8m4d-udr',
          routes: [
            {
              name: 'default',
              addressPrefix: '0.0.0.0/0',
              nextHopType: 'VirtualAppliance',
              nextHopIpAddress: '10.0.10.4',
            },
          ],
        },
      ],
    });
    expect(infrastructure(await discover(cluster())).egress).toEqual({
      type: 'UserDefinedRouting',
      routeTable: 'prod-west-q8m4d-udr',
    });
    // A subnet that keeps Azure's default outbound access: a VM in no backend pool still gets out.
    arm.seed(
      worker((s) => {
        delete s.natGateway;
        delete s.routeTable;
      }),
    );
    expect(infrastructure(await discover(cluster())).egress).toEqual({
      type: 'DefaultOutboundAccess',
    });
    // The fixture's worker subnet has a NAT gateway.
    arm.seed(world);
    expect(infrastructure(await discover(cluster())).egress).toEqual({
      type: 'NATGateway',
      natGateway: 'prod-west-q8m4d-natgw',
    });
  });

  it('refuses an image Azure says needs a purchase plan, even when the MachineSet says none', async () => {
    const result = failure(
      await discover(
        cluster(undefined, {
          publisher: 'redhat',
          offer: 'rh-ocp-worker',
          sku: 'rh-ocp-worker',
          version: '4.16.2024070100',
          type: 'MarketplaceNoPlan',
        }),
      ),
    );
    expect(result.reason).toBe('ImageNotSupported');
    expect(result.message).toContain(
      'boots from the marketplace image redhat:rh-ocp-worker:rh-ocp-worker:4.16.2024070100, which Azure says needs the purchase plan redhat/rh-ocp-worker/rh-ocp-worker',
    );
  });

  it('names a missing image, subnet or identity, and a refused credential', async () => {
    const noImage = failure(
      await discover(cluster(undefined, { ...ARO_MARKETPLACE_IMAGE, version: '416.94.20990101' })),
    );
    expect(noImage.reason).toBe('ImageNotFound');
    expect(noImage.message).toContain(
      `marketplace image azureopenshift:aro4:aro_416:416.94.20990101 of MachineSet openshift-machine-api/${WORKERS[0]} not found in eastus`,
    );

    const world = azureFixtureArmWorld();
    arm.seed({
      ...world,
      subnets: world.subnets.filter((s) => !s.name.includes('worker')),
      userAssignedIdentities: [],
    });
    const noSubnet = failure(await discover(cluster()));
    expect(noSubnet.reason).toBe('SubnetNotFound');
    expect(noSubnet.message).toContain(
      `subnet prod-west-q8m4d-worker-subnet of virtual network prod-west-q8m4d-vnet in resource group prod-west-q8m4d-rg of MachineSet openshift-machine-api/${WORKERS[0]} not found in subscription 0d4b6e2a-7c1f-4e3b-9a8d-5c2f1e0b3a7d`,
    );

    arm.seed({ ...world, userAssignedIdentities: [] });
    const noIdentity = failure(await discover(cluster()));
    expect(noIdentity.reason).toBe('ManagedIdentityNotFound');
    expect(noIdentity.message).toContain('userAssignedIdentities/prod-west-q8m4d-identity');

    arm.seed(world);
    const refused = failure(
      await discoverAzureStandalone({
        reader: cluster(),
        arm: (subscriptionID) =>
          new ArmResourceReader(
            {
              getToken: () =>
                Promise.resolve({
                  token: 'not-the-token',
                  expiresOnTimestamp: Date.now() + 60_000,
                }),
            },
            subscriptionID,
            arm.clientOptions(),
          ),
      }),
    );
    expect(refused.reason).toBe('CloudLookupFailed');
    expect(refused.message).toContain(
      'Azure Resource Manager: reading subnet prod-west-q8m4d-worker-subnet',
    );
  });
});

describe('discoverAzureStandalone through the real client and the API-server emulator', () => {
  const apiServer = new KubeApiServerEmulator();
  let kubeConfig: KubeConfig;

  beforeAll(async () => {
    await apiServer.start();
    apiServer.loadCrdsFromDir(join(CRDS_DIR, 'openshift'));
    // Seeding validates every object, status included, against the real OpenShift CRDs.
    apiServer.seedFromDir(fileURLToPath(OCP_AZURE_STANDALONE));
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(apiServer.kubeconfigYaml());
  });
  afterAll(async () => {
    await apiServer.stop();
  });

  it('refuses the installed cluster, then discovers it once its MachineSets boot a marketplace image', async () => {
    const reader = new KubeClusterObjectReader(kubeConfig);
    expect(failure(await discover(reader)).reason).toBe('ImageNotSupported');

    const customObjects = kubeConfig.makeApiClient(CustomObjectsApi);
    const target = {
      group: 'machine.openshift.io',
      version: 'v1beta1',
      namespace: 'openshift-machine-api',
      plural: 'machinesets',
    };
    const list = (await customObjects.listNamespacedCustomObject(target)) as {
      items: KubeObject[];
    };
    for (const machineSet of list.items) {
      providerSpecOf(machineSet).image = { ...ARO_MARKETPLACE_IMAGE };
      await customObjects.replaceNamespacedCustomObject({
        ...target,
        name: machineSet.metadata!.name!,
        body: machineSet,
      });
    }
    expect(infrastructure(await discover(reader))).toEqual(azureFixtureInfrastructure());
  });
});

import { readWorkerKubelet, withWorkerKubelet } from '../openshift/worker-kubelet.js';
import type { ClusterObjectReader } from '../cluster-reader.js';
import type { AzureResourceReader } from './arm.js';
import { describeError } from '../describe-error.js';
import { readWorkerUserData } from '../openshift/user-data.js';
import {
  firstUsableWorker,
  MACHINE_API_NAMESPACE,
  workerSelectedCondition,
} from '../openshift/worker-machinesets.js';
import { fail, readCluster, Stop } from '../stop.js';
import type { DiscoveryFailure, DiscoveryResult } from '../types.js';
import { parseAzureCloudCredentials } from './credentials.js';
import { parseAzureInfrastructure } from './infrastructure.js';
import {
  SUPPORTED_IMAGES,
  parseAzureWorkerMachineSet,
  resolveAzureWorker,
  selectAzureWorkerMachineSet,
  type AzureWorkerProviderSpec,
} from './machinesets.js';
import type {
  AzureCloudCredentials,
  AzureEgress,
  AzureImageRequirements,
  AzureStandaloneInfrastructure,
  AzureWorkerMachineSet,
} from './types.js';

/** Why a candidate set is passed over rather than discovery failing at once. */
const SET_UNUSABLE = new Set<DiscoveryFailure['reason']>([
  'InvalidWorkerMachineSet',
  'ImageNotSupported',
  'ImageNotFound',
  'SubnetNotFound',
  'ManagedIdentityNotFound',
  'UserDataSecretNotFound',
  'UserDataKeyMissing',
  'WindowsUserData',
]);

export interface AzureStandaloneDiscoveryInput {
  reader: ClusterObjectReader;
  /**
   * Azure Resource Manager for the worker's subscription, or a factory given the subscription
   * read from the credentials Secret (callers usually cannot know it before discovery).
   */
  arm: AzureResourceReader | ((subscriptionID: string) => AzureResourceReader);
}

/**
 * Learns what Karpenter needs from a standalone OpenShift cluster on Azure: the Infrastructure,
 * the first general-purpose worker MachineSet's Azure providerSpec with machine-api-provider-
 * azure's defaults, its credentials and user data, and the zones of all worker sets. Never
 * throws: every missing or unusable piece comes back as its own reason, and a worker image the
 * OpenShift fork of karpenter-provider-azure cannot boot is `ImageNotSupported`.
 */
export async function discoverAzureStandalone(
  input: AzureStandaloneDiscoveryInput,
): Promise<DiscoveryResult<AzureStandaloneInfrastructure>> {
  try {
    const infrastructure = await discover(input);
    return {
      ok: true,
      infrastructure,
      conditions: [workerSelectedCondition('AKSNodeClass', infrastructure.workerSelection)],
    };
  } catch (err) {
    if (err instanceof Stop) return err.failure;
    return {
      ok: false,
      reason: 'KubernetesLookupFailed',
      message: `unexpected error: ${describeError(err)}`,
    };
  }
}

async function discover({
  reader,
  arm,
}: AzureStandaloneDiscoveryInput): Promise<AzureStandaloneInfrastructure> {
  const infrastructureObject = await readCluster('Infrastructure cluster', () =>
    reader.getInfrastructure(),
  );
  if (infrastructureObject === undefined || infrastructureObject === null) {
    fail(
      'InfrastructureNotFound',
      `Infrastructure cluster (config.openshift.io/v1) not found; is this an OpenShift cluster?`,
    );
  }
  const infrastructure = parseAzureInfrastructure(infrastructureObject);
  if (!infrastructure.ok) throw new Stop(infrastructure);

  const machineSets = await readCluster(`MachineSets in ${MACHINE_API_NAMESPACE}`, () =>
    reader.listMachineSets(MACHINE_API_NAMESPACE),
  );
  const selection = selectAzureWorkerMachineSet(machineSets);
  const providerSpecs = selection.candidates.map((c) => parseAzureWorkerMachineSet(c.machineSet));
  const credentialsBySecret = new Map<string, AzureCloudCredentials>();
  const { value, workerSelection } = await firstUsableWorker(
    selection,
    SET_UNUSABLE,
    async (_candidate, index) => {
      const providerSpec = providerSpecs[index]!;
      if (!providerSpec.ok) throw new Stop(providerSpec);
      const credentials = await readCredentials(reader, providerSpec.value, credentialsBySecret);
      const worker = resolveAzureWorker(providerSpec.value, credentials);
      if (!worker.ok) throw new Stop(worker);
      const { imageRequirements, egress } = await verifyInAzure(
        typeof arm === 'function' ? arm(credentials.subscriptionID) : arm,
        worker.value,
        credentials.subscriptionID,
      );
      return {
        credentials,
        worker: worker.value,
        userData: await readWorkerUserData(reader, worker.value),
        imageRequirements,
        egress,
      };
    },
  );
  return {
    platform: 'AZURE',
    ...infrastructure.value,
    credentials: value.credentials,
    worker: value.worker,
    workerSelection,
    vnetSubnetID: vnetSubnetID(value.credentials.subscriptionID, value.worker),
    zones: zonesOf(providerSpecs, value.credentials),
    userData: value.userData,
    ...withWorkerKubelet(await readWorkerKubelet(reader)),
    imageRequirements: value.imageRequirements,
    egress: value.egress,
  };
}

async function readCredentials(
  reader: ClusterObjectReader,
  worker: AzureWorkerProviderSpec,
  known: Map<string, AzureCloudCredentials>,
): Promise<AzureCloudCredentials> {
  const { namespace, name } = worker.credentialsSecret;
  const cached = known.get(`${namespace}/${name}`);
  if (cached) return cached;
  const where = `Secret ${namespace}/${name} (credentialsSecret of MachineSet ${worker.name})`;
  const secret = await readCluster(where, () => reader.getSecret(namespace, name));
  if (secret === undefined) fail('CloudCredentialsSecretNotFound', `${where} not found`);
  const credentials = parseAzureCloudCredentials(worker.credentialsSecret, secret);
  if (!credentials.ok) throw new Stop(credentials);
  known.set(`${namespace}/${name}`, credentials.value);
  return credentials.value;
}

async function armCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    fail(
      'CloudLookupFailed',
      `Azure Resource Manager: reading ${what} failed: ${describeError(err)}`,
    );
  }
}

const IDENTITY_ID =
  /^\/subscriptions\/[^/]+\/resourcegroups\/([^/]+)\/providers\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/([^/]+)$/i;

/** ARM's image architectures as `kubernetes.io/arch` values (the fork's AzureToKubeArchitectures). */
const KUBE_ARCHITECTURES: Record<string, AzureImageRequirements['architecture']> = {
  x64: 'amd64',
  arm64: 'arm64',
};

/**
 * The worker's subnet, managed identity and image as Azure has them: each must exist, and the
 * image must need no purchase plan (ARM says so even when the MachineSet's `type` does not).
 * Returns what the image can boot on: its architecture and generation, and the location's sizes
 * of that architecture that cannot boot its generation.
 */
async function verifyInAzure(
  arm: AzureResourceReader,
  worker: AzureWorkerMachineSet,
  subscriptionID: string,
): Promise<{ imageRequirements: AzureImageRequirements; egress: AzureEgress }> {
  const of = `of MachineSet ${MACHINE_API_NAMESPACE}/${worker.name}`;
  const subnetName = `subnet ${worker.subnet} of virtual network ${worker.vnet} in resource group ${worker.networkResourceGroup}`;
  const subnet = await armCall(subnetName, () =>
    arm.getSubnet(worker.networkResourceGroup, worker.vnet, worker.subnet),
  );
  if (subnet === undefined) {
    fail('SubnetNotFound', `${subnetName} ${of} not found in subscription ${subscriptionID}`);
  }
  const egress = await subnetEgress(arm, worker, subnet, subnetName);
  if (worker.managedIdentityID) {
    const [, resourceGroup, name] = IDENTITY_ID.exec(worker.managedIdentityID) ?? [];
    if (resourceGroup === undefined || name === undefined) {
      fail(
        'InvalidWorkerMachineSet',
        `MachineSet ${MACHINE_API_NAMESPACE}/${worker.name}: spec.template.spec.providerSpec.value.managedIdentity: ${worker.managedIdentityID} is not a user-assigned identity's ARM ID`,
      );
    }
    const identity = await armCall(`managed identity ${worker.managedIdentityID}`, () =>
      arm.getUserAssignedIdentity(resourceGroup, name),
    );
    if (identity === undefined) {
      fail(
        'ManagedIdentityNotFound',
        `managed identity ${worker.managedIdentityID} ${of} not found`,
      );
    }
  }
  const { publisher, offer, sku, version } = worker.image;
  const imageName = `marketplace image ${publisher}:${offer}:${sku}:${version}`;
  const image = await armCall(imageName, () =>
    arm.getMarketplaceImage(worker.location, worker.image),
  );
  if (image === undefined) {
    fail('ImageNotFound', `${imageName} ${of} not found in ${worker.location}`);
  }
  if (image.plan) {
    fail(
      'ImageNotSupported',
      `MachineSet ${MACHINE_API_NAMESPACE}/${worker.name} boots from the ${imageName}, which Azure says needs the purchase plan ${image.plan.publisher}/${image.plan.product}/${image.plan.name}; ${SUPPORTED_IMAGES}`,
    );
  }
  // ARM leaves both out for some old images: those are x64 and Gen1 (ARM's documented defaults).
  const architecture = KUBE_ARCHITECTURES[(image.architecture ?? 'x64').toLowerCase()];
  if (architecture === undefined) {
    fail(
      'ImageNotSupported',
      `MachineSet ${MACHINE_API_NAMESPACE}/${worker.name} boots from the ${imageName}, whose architecture ${image.architecture} Karpenter does not know (x64 or Arm64)`,
    );
  }
  const hyperVGeneration = (image.hyperVGeneration ?? 'V1').toUpperCase() === 'V2' ? 'V2' : 'V1';
  const sizes = await armCall(`the VM sizes of ${worker.location}`, () =>
    arm.listVmSizes(worker.location),
  );
  const unbootableVmSizes = sizes
    .filter(
      (s) =>
        KUBE_ARCHITECTURES[(s.architecture ?? 'x64').toLowerCase()] === architecture &&
        !s.hyperVGenerations.some((g) => g.toUpperCase() === hyperVGeneration),
    )
    .map((s) => s.name)
    .sort();
  return {
    egress,
    imageRequirements: {
      architecture,
      hyperVGeneration,
      unbootableVmSizes: [...new Set(unbootableVmSizes)],
    },
  };
}

const RESOURCE_NAME = /\/([^/]+)$/;
const ROUTE_TABLE_ID =
  /\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Network\/routeTables\/([^/]+)$/i;
/** Next hops that carry the default route off the VNet without the load balancer's SNAT. */
const EGRESS_NEXT_HOPS = new Set(['virtualappliance', 'virtualnetworkgateway']);

/**
 * How a VM in the worker subnet reaches the internet without being in a load balancer's backend
 * pool: a NAT gateway on the subnet, a route table sending 0.0.0.0/0 to a firewall or gateway, or
 * (a subnet that is not private) Azure's default outbound access. Otherwise the workers' egress is
 * the outbound rule of the cluster's load balancer (named after the infraID), whose backend pool
 * the fork never joins (pkg/providers/loadbalancer/loadbalancer.go
 * at 8e5b2e51 looks only for kubernetes and kubernetes-internal): refused.
 */
async function subnetEgress(
  arm: AzureResourceReader,
  worker: AzureWorkerMachineSet,
  subnet: { natGatewayID?: string; routeTableID?: string; defaultOutboundAccess?: boolean },
  subnetName: string,
): Promise<AzureEgress> {
  if (subnet.natGatewayID) {
    return { type: 'NATGateway', natGateway: RESOURCE_NAME.exec(subnet.natGatewayID)?.[1] ?? '' };
  }
  const [, group, name] = ROUTE_TABLE_ID.exec(subnet.routeTableID ?? '') ?? [];
  if (group && name) {
    const table = await armCall(`route table ${name} in resource group ${group}`, () =>
      arm.getRouteTable(group, name),
    );
    const routed = table?.routes.some(
      (r) => r.addressPrefix === '0.0.0.0/0' && EGRESS_NEXT_HOPS.has(r.nextHopType.toLowerCase()),
    );
    if (routed) return { type: 'UserDefinedRouting', routeTable: name };
  }
  // Not a private subnet: Azure's default outbound access gives a VM in no backend pool an IP.
  if (subnet.defaultOutboundAccess !== false) return { type: 'DefaultOutboundAccess' };
  const loadBalancer = worker.name.replace(/-worker-.*$/, '');
  fail(
    'NoOutboundConnectivity',
    `${subnetName} is private (defaultOutboundAccess false) and has no NAT gateway and no route table sending 0.0.0.0/0 to a virtual appliance or gateway: its workers reach the internet through the outbound rule of load balancer ${loadBalancer}, whose backend pool the OpenShift fork of karpenter-provider-azure never adds its NICs to (it joins only load balancers named kubernetes and kubernetes-internal), so Karpenter nodes would have no egress and never pull their images. Attach a NAT gateway to the subnet, or route 0.0.0.0/0 to a firewall (outboundType UserDefinedRouting)`,
  );
}

/** The operand's VNET_SUBNET_ID: the worker's subnet as an ARM ID. */
export function vnetSubnetID(subscriptionID: string, worker: AzureWorkerMachineSet): string {
  return (
    `/subscriptions/${subscriptionID}/resourceGroups/${worker.networkResourceGroup}` +
    `/providers/Microsoft.Network/virtualNetworks/${worker.vnet}/subnets/${worker.subnet}`
  );
}

/**
 * Karpenter's zone names (`<location>-<zone>`, as the provider labels nodes
 * topology.kubernetes.io/zone) of every general-purpose worker set that names a zone.
 */
function zonesOf(
  providerSpecs: ReturnType<typeof parseAzureWorkerMachineSet>[],
  credentials: AzureCloudCredentials,
): string[] {
  const zones = new Set<string>();
  for (const parsed of providerSpecs) {
    if (!parsed.ok || !parsed.value.spec.zone) continue;
    const location = parsed.value.spec.location || credentials.region;
    if (location) zones.add(`${location}-${parsed.value.spec.zone}`);
  }
  return [...zones].sort();
}

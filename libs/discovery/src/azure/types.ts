import type { WorkerKubelet } from '../openshift/worker-kubelet.js';
/** A marketplace image as karpenter-provider-azure's OpenShift fork takes it (all four set). */
export interface AzureMarketplaceImage {
  publisher: string;
  offer: string;
  sku: string;
  version: string;
}

/**
 * The worker MachineSet's Azure providerSpec (openshift/api machine/v1beta1
 * AzureMachineProviderSpec), with machine-api-provider-azure's defaults applied: the resource
 * groups from the credentials when empty, the location from the credentials' region.
 */
export interface AzureWorkerMachineSet {
  name: string;
  vmSize: string;
  location: string;
  image: AzureMarketplaceImage;
  /** osDisk.diskSizeGB. */
  osDiskSizeGB: number;
  vnet: string;
  subnet: string;
  networkResourceGroup: string;
  resourceGroup: string;
  /**
   * The user-assigned identity as a full ARM ID (the providerSpec often gives a bare name);
   * absent when the MachineSet names none.
   */
  managedIdentityID?: string;
  tags: Record<string, string>;
  /** The availability zone ("1", "2", "3"); absent in regions without zones. */
  zone?: string;
  userDataSecretName: string;
}

/**
 * What the worker image can boot, as ARM describes the image and the location's VM sizes. In
 * OpenShift mode the fork records the marketplace image with no requirements
 * (pkg/controllers/nodeclass/status/images.go at 8e5b2e51), so without these Karpenter may pick an
 * arm64 size or one of the other Hyper-V generation for the image, and the VM never boots.
 */
export interface AzureImageRequirements {
  /** `kubernetes.io/arch` of the image: ARM's `x64` is `amd64`, `Arm64` is `arm64`. */
  architecture: 'amd64' | 'arm64';
  /** The image's `hyperVGeneration`. */
  hyperVGeneration: 'V1' | 'V2';
  /**
   * Sizes of the image's architecture in its location whose `HyperVGenerations` capability lacks
   * the image's generation, sorted (sizes of another architecture are kept out by `architecture`).
   */
  unbootableVmSizes: string[];
}

/** How the operand will authenticate, from the keys of the cloud-credentials Secret. */
export interface AzureCloudCredentials {
  /** The Secret the keys are read from (the operand maps them, never copies them). */
  secret: { namespace: string; name: string };
  subscriptionID: string;
  tenantID: string;
  clientID: string;
  /** `azure_client_secret` (a service principal) or `azure_federated_token_file` (workload identity). */
  authentication: 'ClientSecret' | 'FederatedToken';
  /** `azure_resourcegroup`: machine-api-provider-azure's resource group when a MachineSet names none. */
  resourceGroup?: string;
  region?: string;
}

/**
 * What discovery learns about a standalone OpenShift cluster on Azure: everything the Azure
 * CloudProvider needs to render the operand and the default AKSNodeClass.
 */
export interface AzureStandaloneInfrastructure {
  platform: 'AZURE';
  /** Infrastructure.status.infrastructureName; the operand's CLUSTER_NAME. */
  infraID: string;
  /** Infrastructure.status.apiServerInternalURI; the operand's CLUSTER_ENDPOINT. */
  apiServerInternalURI: string;
  controlPlaneTopology: string;
  /** platformStatus.azure.cloudName; `AzurePublicCloud` when the cluster leaves it empty. */
  cloudName: string;
  armEndpoint?: string;
  /** platformStatus.azure.resourceGroupName: where the cluster's VMs live (AZURE_NODE_RESOURCE_GROUP). */
  resourceGroup: string;
  /** platformStatus.azure.networkResourceGroupName, where the cluster's network lives when set. */
  networkResourceGroup?: string;
  /** platformStatus.azure.resourceTags as a map. */
  resourceTags: Record<string, string>;
  credentials: AzureCloudCredentials;
  worker: AzureWorkerMachineSet;
  workerSelection: { chosen: string; passedOver: { name: string; why: string }[] };
  /** The operand's VNET_SUBNET_ID, built from the worker's subscription, network group, vnet and subnet. */
  vnetSubnetID: string;
  /**
   * `<location>-<zone>` of every general-purpose worker MachineSet, sorted: the NodePools' zone
   * requirement. Empty when the workers are not zonal.
   */
  zones: string[];
  /** The worker user-data Secret's `userData` key, decoded. */
  userData: string;
  /**
   * The worker pool's kubelet settings (accepted KubeletConfigs, latency profile), which each
   * Karpenter pool's KubeletConfig carries. Absent from infrastructure recorded before it.
   */
  workerKubelet?: WorkerKubelet;
  /** What the worker image can boot: every fleet NodePool requires it. */
  imageRequirements: AzureImageRequirements;
  /** How Karpenter's nodes reach the internet from the worker subnet. */
  egress: AzureEgress;
}

/**
 * Egress the worker subnet itself gives every VM in it. A private subnet whose workers get theirs
 * only from the load balancer's outbound rule (OpenShift's default outboundType LoadBalancer) is
 * refused: the fork only adds NICs to load balancers named kubernetes/kubernetes-internal.
 */
export type AzureEgress =
  | { type: 'NATGateway'; natGateway: string }
  | { type: 'UserDefinedRouting'; routeTable: string }
  /**
   * Azure's default outbound access, which a subnet keeps unless `defaultOutboundAccess` is false
   * (virtual networks created before its retirement): retiring, and its IP may change, but VMs in
   * no backend pool do get out.
   */
  | { type: 'DefaultOutboundAccess' };

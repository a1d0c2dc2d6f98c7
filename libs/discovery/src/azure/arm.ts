import { ComputeManagementClient } from '@azure/arm-compute';
import { ManagedServiceIdentityClient } from '@azure/arm-msi';
import { NetworkManagementClient } from '@azure/arm-network';
import type { TokenCredential } from '@azure/core-auth';

import type { AzureMarketplaceImage } from './types.js';

/** What discovery asks Azure Resource Manager; `undefined` when ARM answers 404. */
export interface AzureResourceReader {
  /**
   * The subnet, with the ARM IDs of its NAT gateway and route table when it has them, and its
   * `defaultOutboundAccess` when ARM gives it.
   */
  getSubnet(
    resourceGroup: string,
    virtualNetwork: string,
    subnet: string,
  ): Promise<
    | { id: string; natGatewayID?: string; routeTableID?: string; defaultOutboundAccess?: boolean }
    | undefined
  >;
  /** A route table's routes (address prefix and next hop type). */
  getRouteTable(
    resourceGroup: string,
    name: string,
  ): Promise<{ routes: { addressPrefix: string; nextHopType: string }[] } | undefined>;
  getUserAssignedIdentity(
    resourceGroup: string,
    name: string,
  ): Promise<{ id: string; clientId: string } | undefined>;
  /**
   * The marketplace image version (`latest` resolved to the newest), with its purchase plan if
   * any, and what ARM says it boots on (`architecture` x64 | Arm64, `hyperVGeneration` V1 | V2).
   */
  getMarketplaceImage(
    location: string,
    image: AzureMarketplaceImage,
  ): Promise<
    | {
        version: string;
        plan?: { name: string; product: string; publisher: string };
        architecture?: string;
        hyperVGeneration?: string;
      }
    | undefined
  >;
  /** The VM sizes the Resource SKUs API lists in a location, with what they can boot. */
  listVmSizes(location: string): Promise<AzureVmSize[]>;
}

/** A VM size's `HyperVGenerations` and `CpuArchitectureType` capabilities. */
export interface AzureVmSize {
  name: string;
  hyperVGenerations: string[];
  architecture?: string;
}

/**
 * Options the `@azure/arm-*` clients share: another cloud's endpoint, its token audience, a CA to
 * trust. The audience goes in both forms the SDKs read: `credentialScopes` (arm-network,
 * arm-msi) and `credentials.scopes` (arm-compute 24, generated from TypeSpec, which ignores
 * `credentialScopes` and would ask Entra ID for https://management.azure.com, refused by any
 * other cloud's ARM as InvalidAuthenticationTokenAudience).
 */
export interface ArmClientOptions {
  endpoint?: string;
  credentialScopes?: string[];
  credentials?: { scopes: string[] };
  tlsOptions?: { ca?: string };
}

const isNotFound = (err: unknown) => (err as { statusCode?: unknown }).statusCode === 404;

async function orUndefined<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** AzureResourceReader over the Azure SDK's management clients. */
export class ArmResourceReader implements AzureResourceReader {
  private readonly network: NetworkManagementClient;
  private readonly identities: ManagedServiceIdentityClient;
  private readonly compute: ComputeManagementClient;

  constructor(credential: TokenCredential, subscriptionID: string, options: ArmClientOptions = {}) {
    const common = { ...options, retryOptions: { maxRetries: 1 } };
    this.network = new NetworkManagementClient(credential, subscriptionID, common);
    this.identities = new ManagedServiceIdentityClient(credential, subscriptionID, common);
    this.compute = new ComputeManagementClient(credential, subscriptionID, common);
  }

  getSubnet(resourceGroup: string, virtualNetwork: string, subnet: string) {
    return orUndefined(async () => {
      const found = await this.network.subnets.get(resourceGroup, virtualNetwork, subnet);
      return {
        id: found.id ?? '',
        ...(found.natGateway?.id ? { natGatewayID: found.natGateway.id } : {}),
        ...(found.routeTable?.id ? { routeTableID: found.routeTable.id } : {}),
        ...(found.defaultOutboundAccess !== undefined
          ? { defaultOutboundAccess: found.defaultOutboundAccess }
          : {}),
      };
    });
  }

  getRouteTable(resourceGroup: string, name: string) {
    return orUndefined(async () => {
      const found = await this.network.routeTables.get(resourceGroup, name);
      return {
        routes: (found.routes ?? []).map((r) => ({
          addressPrefix: r.addressPrefix ?? '',
          nextHopType: r.nextHopType ?? '',
        })),
      };
    });
  }

  getUserAssignedIdentity(resourceGroup: string, name: string) {
    return orUndefined(async () => {
      const found = await this.identities.userAssignedIdentities.get(resourceGroup, name);
      return { id: found.id ?? '', clientId: found.clientId ?? '' };
    });
  }

  getMarketplaceImage(location: string, image: AzureMarketplaceImage) {
    return orUndefined(async () => {
      let version = image.version;
      if (version.toLowerCase() === 'latest') {
        const versions = await this.compute.virtualMachineImages.list(
          location,
          image.publisher,
          image.offer,
          image.sku,
        );
        const newest = versions
          .map((v) => v.name)
          .sort(compareVersions)
          .at(-1);
        if (newest === undefined) return undefined;
        version = newest;
      }
      const found = await this.compute.virtualMachineImages.get(
        location,
        image.publisher,
        image.offer,
        image.sku,
        version,
      );
      const plan = found.plan;
      return {
        version,
        ...(plan?.name && plan.product && plan.publisher
          ? { plan: { name: plan.name, product: plan.product, publisher: plan.publisher } }
          : {}),
        ...(found.architecture ? { architecture: found.architecture } : {}),
        ...(found.hyperVGeneration ? { hyperVGeneration: found.hyperVGeneration } : {}),
      };
    });
  }

  async listVmSizes(location: string): Promise<AzureVmSize[]> {
    const sizes: AzureVmSize[] = [];
    // ARM filters Resource SKUs by location only; the fork lists them the same way (skewer).
    for await (const sku of this.compute.resourceSkus.list({
      filter: `location eq '${location}'`,
    })) {
      if (sku.resourceType !== 'virtualMachines' || !sku.name) continue;
      const capability = (name: string) =>
        sku.capabilities?.find((c) => c.name?.toLowerCase() === name.toLowerCase())?.value;
      const architecture = capability('CpuArchitectureType');
      sizes.push({
        name: sku.name,
        // A size without the capability boots neither generation as far as ARM says (skewer, which
        // the fork uses, then gives it no sku-hyperv-generation value at all).
        hyperVGenerations: (capability('HyperVGenerations') ?? '')
          .split(',')
          .map((g) => g.trim())
          .filter(Boolean),
        ...(architecture ? { architecture } : {}),
      });
    }
    return sizes;
  }
}

/** Marketplace versions are Major.Minor.Build: compare them as numbers. */
function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

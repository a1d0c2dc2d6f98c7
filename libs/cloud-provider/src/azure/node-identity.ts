import type { NodeIdentityClaim, NodeIdentityVerdict } from '../types.js';

/** What the check needs of an Azure VM: `virtualMachines.get` with its instance view, and its NICs. */
export interface AzureVmIdentity {
  /** The VM's ARM ID as Azure spells it. */
  id: string;
  name: string;
  /** osProfile.computerName: the node's hostname, hence its name. */
  computerName?: string;
  /** The instance view's `PowerState/<state>` code, without the prefix (running, starting, …). */
  powerState?: string;
  /** Private IP addresses of the VM's network interfaces. */
  privateIpAddresses: string[];
  /** The VM's ARM tags: karpenter-provider-azure writes `karpenter.azure.com_cluster` on each. */
  tags: Record<string, string>;
}

/** Whose VM it is: karpenter-provider-azure tags every VM it launches with its CLUSTER_NAME. */
export const AZURE_CLUSTER_TAG = 'karpenter.azure.com_cluster';

/** The cluster a node must belong to: where its VM lives, and the operand's CLUSTER_NAME. */
export interface AzureNodeIdentityCluster {
  subscriptionID: string;
  resourceGroup: string;
  /** The operand's CLUSTER_NAME (the infraID), the value of the VM's cluster tag. */
  clusterName: string;
}

/** A tag's value; ARM tag names are case-insensitive, their values are not. */
function tagValue(tags: Record<string, string>, key: string): string | undefined {
  for (const [k, v] of Object.entries(tags)) if (same(k, key)) return v;
  return undefined;
}

/** One VM by resource group and name; undefined when ARM answers 404, a throw otherwise. */
export type AzureVmLookup = (
  resourceGroup: string,
  name: string,
) => Promise<AzureVmIdentity | undefined>;

export interface AzureVmRef {
  subscriptionID: string;
  resourceGroup: string;
  name: string;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

const PROVIDER_ID =
  /^azure:\/\/\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Compute\/virtualMachines\/([^/]+)$/i;

/**
 * `azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>`
 * → its parts; anything else (a scale-set instance included) is undefined, so it is never approved.
 */
export function parseAzureProviderID(providerID: string): AzureVmRef | undefined {
  const [, subscriptionID, resourceGroup, name] = PROVIDER_ID.exec(providerID) ?? [];
  if (subscriptionID === undefined || resourceGroup === undefined || name === undefined)
    return undefined;
  return { subscriptionID, resourceGroup, name };
}

/** Power states of a VM that can still be the machine behind a CSR. */
const LIVE_STATES = new Set(['starting', 'running']);

/**
 * Verdicts for each claim, in the claims' order: the VM behind the providerID must be in the
 * cluster's subscription and node resource group (machine-api-provider-azure lowercases both, so
 * they compare case-insensitively), exist, carry the cluster tag `karpenter.azure.com_cluster`
 * with the operand's CLUSTER_NAME (a VM of another cluster in a shared resource group is not this
 * cluster's node), be starting or running, and have the node name as its computer name. Its NICs' private IPs are the addresses a serving certificate may name.
 */
export async function verifyAzureNodeIdentity(
  claims: readonly NodeIdentityClaim[],
  cluster: AzureNodeIdentityCluster,
  lookup: AzureVmLookup,
): Promise<NodeIdentityVerdict[]> {
  const verdicts: NodeIdentityVerdict[] = [];
  const seen = new Map<string, Promise<AzureVmIdentity | undefined>>();
  for (const { nodeName, providerID } of claims) {
    const deny = (
      reason: Extract<NodeIdentityVerdict, { verified: false }>['reason'],
      message: string,
    ): NodeIdentityVerdict => ({ nodeName, providerID, verified: false, reason, message });
    const ref = parseAzureProviderID(providerID);
    if (ref === undefined) {
      verdicts.push(
        deny('InvalidProviderID', `providerID "${providerID}" does not name an Azure VM`),
      );
      continue;
    }
    if (
      !same(ref.subscriptionID, cluster.subscriptionID) ||
      !same(ref.resourceGroup, cluster.resourceGroup)
    ) {
      verdicts.push(
        deny(
          'InvalidProviderID',
          `providerID "${providerID}" names a VM outside the cluster's resource group ${cluster.resourceGroup} of subscription ${cluster.subscriptionID}`,
        ),
      );
      continue;
    }
    const key = ref.name.toLowerCase();
    let pending = seen.get(key);
    if (!pending) {
      pending = lookup(cluster.resourceGroup, ref.name);
      seen.set(key, pending);
    }
    let vm: AzureVmIdentity | undefined;
    try {
      vm = await pending;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      verdicts.push(deny('CloudLookupFailed', `reading Azure VM ${ref.name} failed: ${message}`));
      continue;
    }
    if (vm === undefined) {
      verdicts.push(
        deny(
          'InstanceNotFound',
          `Azure VM ${ref.name} does not exist in resource group ${cluster.resourceGroup}`,
        ),
      );
      continue;
    }
    const clusterTag = tagValue(vm.tags, AZURE_CLUSTER_TAG);
    if (clusterTag !== cluster.clusterName) {
      verdicts.push(
        deny(
          'InstanceNotInCluster',
          clusterTag === undefined
            ? `Azure VM ${vm.name} has no ${AZURE_CLUSTER_TAG} tag; the cluster's VMs carry ${AZURE_CLUSTER_TAG}=${cluster.clusterName}`
            : `Azure VM ${vm.name} has tag ${AZURE_CLUSTER_TAG}=${clusterTag}, not ${cluster.clusterName}`,
        ),
      );
      continue;
    }
    if (vm.powerState === undefined || !LIVE_STATES.has(vm.powerState)) {
      verdicts.push(
        deny(
          'InstanceNotRunning',
          `Azure VM ${vm.name} is ${vm.powerState ?? 'in no known power state'}`,
        ),
      );
      continue;
    }
    if (vm.computerName === undefined || !same(vm.computerName, nodeName)) {
      verdicts.push(
        deny(
          'NodeNameMismatch',
          `Azure VM ${vm.name} has computer name "${vm.computerName ?? ''}", not node name "${nodeName}"`,
        ),
      );
      continue;
    }
    verdicts.push({
      nodeName,
      providerID,
      verified: true,
      instanceID: vm.id,
      addresses: { dnsNames: [vm.computerName], ipAddresses: [...new Set(vm.privateIpAddresses)] },
    });
  }
  return verdicts;
}

import type { NodeIdentityClaim, NodeIdentityVerdict } from '../types.js';

/** What the check needs of an EC2 instance (a projection of DescribeInstances' Instance). */
export interface Ec2InstanceIdentity {
  instanceId: string;
  privateDnsName?: string;
  /** Private DNS names of its network interfaces' addresses, PrivateDnsName among them. */
  privateDnsNames?: string[];
  /** Private IPv4 addresses of the instance and its interfaces, and their IPv6 addresses. */
  privateIpAddresses?: string[];
  /** Instance state name: pending | running | shutting-down | terminated | stopping | stopped. */
  state?: string;
}

/**
 * DescribeInstances for up to DESCRIBE_INSTANCES_BATCH_SIZE ids. Instances it does not know
 * are simply absent from the result; a throw marks the whole batch CloudLookupFailed.
 */
export type DescribeInstancesLookup = (
  instanceIds: readonly string[],
) => Promise<readonly Ec2InstanceIdentity[]>;

export const DESCRIBE_INSTANCES_BATCH_SIZE = 1000;

const INSTANCE_ID = /^i-[0-9a-f]+$/;

/**
 * `aws:///us-east-1a/i-0abc` → `i-0abc`: the part after the last '/'. Anything that is not an
 * aws:// providerID ending in an instance ID yields undefined, so it can never be approved.
 */
export function parseAwsProviderID(providerID: string): string | undefined {
  if (!providerID.startsWith('aws://')) return undefined;
  const instanceID = providerID.slice(providerID.lastIndexOf('/') + 1);
  return INSTANCE_ID.test(instanceID) ? instanceID : undefined;
}

/** Instances that can still be the machine behind a CSR; a terminated one never is. */
const LIVE_STATES = new Set(['pending', 'running']);

/**
 * Verdicts for each claim, in the claims' order: the instance behind the providerID must exist,
 * be pending or running, and have PrivateDnsName equal to the node name. Distinct instance ids
 * are looked up in batches of at most 1000; a failed batch fails only its own claims.
 */
export async function verifyAwsNodeIdentity(
  claims: readonly NodeIdentityClaim[],
  describeInstances: DescribeInstancesLookup,
): Promise<NodeIdentityVerdict[]> {
  const ids = [
    ...new Set(
      claims.map((c) => parseAwsProviderID(c.providerID)).filter((id) => id !== undefined),
    ),
  ].sort();
  const found = new Map<string, Ec2InstanceIdentity>();
  const failed = new Map<string, string>();
  for (let i = 0; i < ids.length; i += DESCRIBE_INSTANCES_BATCH_SIZE) {
    const batch = ids.slice(i, i + DESCRIBE_INSTANCES_BATCH_SIZE);
    try {
      for (const instance of await describeInstances(batch)) {
        found.set(instance.instanceId, instance);
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      for (const id of batch) failed.set(id, message);
    }
  }

  return claims.map(({ nodeName, providerID }): NodeIdentityVerdict => {
    const deny = (
      reason: Extract<NodeIdentityVerdict, { verified: false }>['reason'],
      message: string,
    ): NodeIdentityVerdict => ({ nodeName, providerID, verified: false, reason, message });
    const instanceID = parseAwsProviderID(providerID);
    if (instanceID === undefined) {
      return deny('InvalidProviderID', `providerID "${providerID}" does not name an EC2 instance`);
    }
    const failure = failed.get(instanceID);
    if (failure !== undefined) {
      return deny('CloudLookupFailed', `DescribeInstances for ${instanceID} failed: ${failure}`);
    }
    const instance = found.get(instanceID);
    if (instance === undefined) {
      return deny('InstanceNotFound', `EC2 instance ${instanceID} does not exist`);
    }
    if (instance.state !== undefined && !LIVE_STATES.has(instance.state)) {
      return deny('InstanceNotRunning', `EC2 instance ${instanceID} is ${instance.state}`);
    }
    if (instance.privateDnsName !== nodeName) {
      return deny(
        'NodeNameMismatch',
        `EC2 instance ${instanceID} has PrivateDnsName "${instance.privateDnsName ?? ''}", not node name "${nodeName}"`,
      );
    }
    const dnsNames = [
      ...new Set([instance.privateDnsName ?? '', ...(instance.privateDnsNames ?? [])]),
    ].filter((n) => n !== '');
    const ipAddresses = [...new Set(instance.privateIpAddresses ?? [])];
    return {
      nodeName,
      providerID,
      verified: true,
      instanceID,
      addresses: { dnsNames, ipAddresses },
    };
  });
}

import { DescribeInstancesCommand, type EC2Client, type Instance } from '@aws-sdk/client-ec2';
import type { DescribeInstancesLookup, Ec2InstanceIdentity } from './node-identity.js';

const NOT_FOUND = 'InvalidInstanceID.NotFound';

/**
 * DescribeInstances by id for the CSR identity check. EC2 fails the whole call when one id does
 * not exist (InvalidInstanceID.NotFound names them); those are dropped and the rest asked again,
 * so one terminated-and-forgotten instance cannot block every other node's approval. Every
 * request has a timeout (awsClientConfig) and the lookup a deadline, so neither can a hung call.
 */
export function describeInstancesLookup(
  ec2: EC2Client,
  deadlineMs: number,
): DescribeInstancesLookup {
  return async (instanceIds) => {
    // One deadline for the whole lookup (pages, retries, re-asks): the approval pass waits on it.
    const abortSignal = AbortSignal.timeout(deadlineMs);
    let ids = [...instanceIds];
    for (let attempt = 0; attempt < 3 && ids.length > 0; attempt++) {
      try {
        const found: Ec2InstanceIdentity[] = [];
        let nextToken: string | undefined;
        do {
          const page = await ec2.send(
            new DescribeInstancesCommand({
              InstanceIds: ids,
              ...(nextToken ? { NextToken: nextToken } : {}),
            }),
            { abortSignal },
          );
          for (const reservation of page.Reservations ?? []) {
            for (const instance of reservation.Instances ?? []) {
              if (!instance.InstanceId) continue;
              found.push({
                instanceId: instance.InstanceId,
                ...(instance.PrivateDnsName ? { privateDnsName: instance.PrivateDnsName } : {}),
                ...(instance.State?.Name ? { state: instance.State.Name } : {}),
                ...instanceAddresses(instance),
              });
            }
          }
          nextToken = page.NextToken;
        } while (nextToken);
        return found;
      } catch (err) {
        const name = (err as { name?: string }).name;
        const message = err instanceof Error ? err.message : '';
        if (name !== NOT_FOUND) throw err;
        const missing = new Set(message.match(/i-[0-9a-f]+/g) ?? []);
        if (missing.size === 0) throw err;
        ids = ids.filter((id) => !missing.has(id));
      }
    }
    if (ids.length === 0) return [];
    throw new Error(`DescribeInstances kept reporting missing instances among ${ids.length} ids`);
  };
}

/** Every private name and address EC2 gives the instance: what its serving certificate may name. */
function instanceAddresses(
  instance: Instance,
): Pick<Ec2InstanceIdentity, 'privateDnsNames' | 'privateIpAddresses'> {
  const dnsNames: string[] = [];
  const ips: string[] = [];
  if (instance.PrivateIpAddress) ips.push(instance.PrivateIpAddress);
  for (const eni of instance.NetworkInterfaces ?? []) {
    if (eni.PrivateDnsName) dnsNames.push(eni.PrivateDnsName);
    if (eni.PrivateIpAddress) ips.push(eni.PrivateIpAddress);
    for (const address of eni.PrivateIpAddresses ?? []) {
      if (address.PrivateDnsName) dnsNames.push(address.PrivateDnsName);
      if (address.PrivateIpAddress) ips.push(address.PrivateIpAddress);
    }
    for (const v6 of eni.Ipv6Addresses ?? []) if (v6.Ipv6Address) ips.push(v6.Ipv6Address);
  }
  // EC2 lists the primary address at the instance, the interface and the address level.
  return { privateDnsNames: [...new Set(dnsNames)], privateIpAddresses: [...new Set(ips)] };
}

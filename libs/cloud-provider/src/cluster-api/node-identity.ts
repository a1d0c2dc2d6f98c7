import { DEPLOYMENT_NAME_LABEL } from '@fleet/discovery';
import type { KubeObject, NodeIdentityClaim, NodeIdentityVerdict } from '../types.js';

interface MachineAddress {
  type?: string;
  address?: string;
}

/** Address types a kubelet's serving certificate may name (the Machine's own, not external). */
const DNS_TYPES = new Set(['InternalDNS', 'Hostname']);
const IP_TYPES = new Set(['InternalIP']);

/**
 * Node identity from Cluster API itself: a CSR's node is legitimate when a Machine of one of the
 * fleet's MachineDeployments carries the claimed providerID (`spec.providerID`, set by the
 * infrastructure provider from the instance) and that node name, either as `status.nodeRef`
 * (after the Node registered) or among `status.addresses` (before: the client CSR comes first).
 * A Machine being deleted never vouches for a new certificate. The verdict's addresses are the
 * Machine's internal ones, so the approver's SAN policy judges them as it judges the cloud's.
 */
export function verifyMachineNodeIdentity(
  claims: readonly NodeIdentityClaim[],
  machines: readonly KubeObject[],
  fleetDeployments: ReadonlySet<string>,
): NodeIdentityVerdict[] {
  return claims.map((claim) => {
    const { nodeName, providerID } = claim;
    const refuse = (
      reason: Extract<NodeIdentityVerdict, { verified: false }>['reason'],
      message: string,
    ): NodeIdentityVerdict => ({ nodeName, providerID, verified: false, reason, message });
    if (providerID === '') return refuse('InvalidProviderID', 'the claim has no providerID');
    const machine = machines.find(
      (m) => (m.spec as { providerID?: string } | undefined)?.providerID === providerID,
    );
    if (!machine) return refuse('InstanceNotFound', `no Machine has providerID ${providerID}`);
    const where = `Machine ${machine.metadata.namespace ?? ''}/${machine.metadata.name}`;
    const deployment = machine.metadata.labels?.[DEPLOYMENT_NAME_LABEL];
    if (deployment === undefined || !fleetDeployments.has(deployment))
      return refuse(
        'InstanceNotFound',
        `${where} (providerID ${providerID}) belongs to ${deployment ? `MachineDeployment ${deployment}` : 'no MachineDeployment'}, not one of the fleet's`,
      );
    if ((machine.metadata as { deletionTimestamp?: string }).deletionTimestamp)
      return refuse('InstanceNotRunning', `${where} is being deleted`);
    const status = (machine.status ?? {}) as {
      nodeRef?: { name?: string };
      addresses?: MachineAddress[];
    };
    const addresses = status.addresses ?? [];
    const names = addresses.filter((a) => DNS_TYPES.has(a.type ?? '')).map((a) => a.address ?? '');
    if (status.nodeRef?.name !== nodeName && !names.includes(nodeName))
      return refuse(
        'NodeNameMismatch',
        `${where} has node ${status.nodeRef?.name ?? '(none yet)'} and addresses ${names.join(', ') || '(none)'}, not ${nodeName}`,
      );
    return {
      nodeName,
      providerID,
      verified: true,
      instanceID: machine.metadata.name,
      addresses: {
        dnsNames: [...new Set(names.filter(Boolean))],
        ipAddresses: [
          ...new Set(
            addresses.filter((a) => IP_TYPES.has(a.type ?? '')).map((a) => a.address ?? ''),
          ),
        ].filter(Boolean),
      },
    };
  });
}

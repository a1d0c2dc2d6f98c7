import type { NodeClassOverrides } from '@fleet/contracts';
import type { AzureStandaloneInfrastructure } from '@fleet/discovery';
import { canonical, isRecord } from '../canonical.js';
import { InvalidDesiredStateError, type FieldCause } from '../errors.js';
import { ownedLabels } from '../labels.js';
import { poolIgnitionPointer } from '../openshift/machine-config.js';
import type { KubeObject, NodeClassEnforcement } from '../types.js';
import {
  AKS_NODE_CLASS,
  azureTagKey,
  DEFAULT_NODE_CLASS_NAME,
  isRestrictedTagKey,
} from './constants.js';

export type AKSNodeClass = KubeObject & { spec: Record<string, unknown> };

/**
 * The fields the fleet owns on every AKSNodeClass: RHCOS boots only from the cluster's worker
 * image with an Ignition pointer to the Machine Config Server, so any other value yields VMs
 * that never join. The pointer is the worker's, moved to the NodeClass's own MachineConfigPool.
 */
export function enforcedNodeClassFields(
  infra: AzureStandaloneInfrastructure,
  nodeClass: string = DEFAULT_NODE_CLASS_NAME,
): { marketplaceImage: Record<string, string>; userData: string } {
  const { publisher, offer, sku, version } = infra.worker.image;
  return {
    marketplaceImage: { publisher, offer, sku, version },
    userData: poolIgnitionPointer(infra.userData, nodeClass),
  };
}

/**
 * The tags machine-api-provider-azure puts on a worker VM (the cluster's resource tags, then the
 * MachineSet's), without the keys Karpenter sets itself, sorted by key.
 */
export function clusterNodeClassTags(infra: AzureStandaloneInfrastructure): Record<string, string> {
  const merged = { ...infra.resourceTags, ...infra.worker.tags };
  const tags: Record<string, string> = {};
  for (const key of Object.keys(merged).sort()) {
    const value = merged[key];
    if (value !== undefined && !isRestrictedTagKey(key)) tags[key] = value;
  }
  return tags;
}

/**
 * The overrides an AKSNodeClass can take: tags (not Karpenter's own keys) and kubelet settings.
 * EC2NodeClass's blockDeviceMappings and metadataOptions have no AKSNodeClass field: the OS
 * disk size comes from the worker MachineSet.
 */
export function validateNodeClassOverrides(overrides: NodeClassOverrides): void {
  const causes: FieldCause[] = [];
  for (const key of Object.keys(overrides.tags ?? {}).sort()) {
    if (!isRestrictedTagKey(key)) continue;
    causes.push({
      field: `nodeClassOverrides.tags[${JSON.stringify(key)}]`,
      message:
        key === ''
          ? 'empty tag keys are not supported'
          : `tag key "${key}" is restricted: karpenter-provider-azure sets it on every VM it creates`,
    });
  }
  const byAzureKey = new Map<string, string>();
  for (const key of Object.keys(overrides.tags ?? {}).sort()) {
    const other = byAzureKey.get(azureTagKey(key));
    if (other !== undefined) {
      causes.push({
        field: `nodeClassOverrides.tags[${JSON.stringify(key)}]`,
        message: `tag keys ${JSON.stringify(other)} and ${JSON.stringify(key)} are the same Azure tag ${JSON.stringify(azureTagKey(key))}: karpenter-provider-azure maps "/" to "_", and which value wins is not defined`,
      });
    } else byAzureKey.set(azureTagKey(key), key);
  }
  for (const name of ['blockDeviceMappings', 'metadataOptions'] as const) {
    if (overrides[name] === undefined) continue;
    causes.push({
      field: `nodeClassOverrides.${name}`,
      message: `AKSNodeClass has no ${name}; on Azure the OS disk size is the worker MachineSet's osDisk.diskSizeGB`,
    });
  }
  if (causes.length > 0) throw new InvalidDesiredStateError(causes);
}

/**
 * The desired kubelet settings, or none: what the NodeClass's MachineConfigPool gets as its
 * KubeletConfig. Never written to `AKSNodeClass.spec.kubelet`: in OpenShift mode the fork builds
 * the VM from `marketplaceImage` and `userData` alone (launchtemplate.go getOpenShiftTemplate at
 * 8e5b2e51) and nothing reads `spec.kubelet` (the instance types' allocatable does not come from
 * it), but the NodeClass hash covers it, so a change would mark every Karpenter node drifted and
 * replace it while the MCO rolls the same nodes for the KubeletConfig.
 */
export function desiredKubelet(overrides: NodeClassOverrides): Record<string, unknown> | undefined {
  return overrides.kubelet && Object.keys(overrides.kubelet).length > 0
    ? canonical(overrides.kubelet)
    : undefined;
}

/**
 * The AKSNodeClass `default`: the worker's subnet, OS disk size, marketplace image and Ignition
 * pointer (for its own pool), and the worker's tags with the SRE's over them. Kubelet settings go
 * to the pool's KubeletConfig only (desiredKubelet).
 */
export function renderDefaultAKSNodeClass(
  infra: AzureStandaloneInfrastructure,
  overrides: NodeClassOverrides,
): AKSNodeClass {
  validateNodeClassOverrides(overrides);
  const enforced = enforcedNodeClassFields(infra);
  const tags = { ...clusterNodeClassTags(infra), ...(overrides.tags ?? {}) };
  return canonical({
    apiVersion: AKS_NODE_CLASS.apiVersion,
    kind: AKS_NODE_CLASS.kind,
    metadata: { name: DEFAULT_NODE_CLASS_NAME, labels: ownedLabels() },
    spec: {
      vnetSubnetID: infra.vnetSubnetID,
      osDiskSizeGB: infra.worker.osDiskSizeGB,
      marketplaceImage: enforced.marketplaceImage,
      userData: enforced.userData,
      ...(Object.keys(tags).length > 0 ? { tags } : {}),
    },
  });
}

const sameJSON = (a: unknown, b: unknown): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/**
 * The apply patch that puts the worker image and the pool's Ignition pointer back on any
 * AKSNodeClass as read from the cluster, and a merge patch taking `spec.kubelet` away: in
 * OpenShift mode it does nothing but drift nodes (desiredKubelet), and the settings reach the
 * nodes through the pool's KubeletConfig. The rest of a user's NodeClass (its subnet, disk, tags)
 * stays theirs.
 */
export function enforceAKSNodeClass(
  live: KubeObject,
  infra: AzureStandaloneInfrastructure,
): NodeClassEnforcement {
  const enforced: Record<string, unknown> = {
    ...enforcedNodeClassFields(infra, live.metadata.name),
  };
  const spec = isRecord(live.spec) ? live.spec : {};
  const drifted = Object.keys(enforced)
    .filter((field) => !sameJSON(spec[field], enforced[field]))
    .map((field) => `spec.${field}`);
  const kubeletDrifted = spec.kubelet !== undefined;
  if (kubeletDrifted) drifted.push('spec.kubelet');
  const head = {
    apiVersion: AKS_NODE_CLASS.apiVersion,
    kind: AKS_NODE_CLASS.kind,
    metadata: { name: live.metadata.name },
  };
  return {
    patch: canonical({ ...head, spec: enforced }),
    ...(kubeletDrifted ? { mergePatch: { ...head, spec: { kubelet: null } } } : {}),
    drifted: drifted.sort(),
  };
}
